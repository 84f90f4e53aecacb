import { mainThreadMicros } from './main-thread-cpu.mjs';

/**
 * Drives `requests` more requests in `windows` windows and returns the median window's rate (it resists this VM's
 * bursts of stolen time better than one long run) and this process's CPU time per request over all of them, all
 * threads and the main thread alone (`NaN` where that is not readable).
 * `drive(n)` sends n requests and resolves when they are answered.
 */
export async function timedWindows(drive, requests, windows = 10) {
  const perWindow = Math.ceil(requests / windows);
  const rates = [];
  const cpuBefore = process.cpuUsage();
  const mainBefore = mainThreadMicros();
  for (let w = 0; w < windows; w++) {
    const started = process.hrtime.bigint();
    await drive(perWindow);
    rates.push(perWindow / (Number(process.hrtime.bigint() - started) / 1e9));
  }
  const cpu = process.cpuUsage(cpuBefore);
  const main = mainBefore === undefined ? Number.NaN : mainThreadMicros() - mainBefore;
  rates.sort((a, b) => a - b);
  const sent = perWindow * windows;
  return { rps: rates[Math.floor(windows / 2)], cpuMicrosPerRequest: (cpu.user + cpu.system) / sent, mainMicrosPerRequest: main / sent };
}
