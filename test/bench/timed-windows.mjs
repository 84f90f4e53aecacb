import { mainThreadMicros } from './main-thread-cpu.mjs';

/**
 * Drives `requests` more requests in `windows` windows and returns the median window's rate (it resists this VM's
 * bursts of stolen time better than one long run) and this process's CPU time per request over all of them, all
 * threads and the main thread alone (`NaN` where that is not readable).
 * `drive(n)` sends n requests and resolves when they are answered.
 */
export async function timedWindows(drive, requests, windows = 10) {
  const perWindow = Math.ceil(requests / windows);
  const measured = [];
  for (let w = 0; w < windows; w++) measured.push(await measuredWindow(drive, perWindow));
  const rates = measured.map((window) => window.requests / (window.elapsedMicros / 1e6)).sort((a, b) => a - b);
  const sum = (key) => measured.reduce((total, window) => total + window[key], 0);
  const sent = perWindow * windows;
  return { rps: rates[Math.floor(windows / 2)], cpuMicrosPerRequest: sum('cpuMicros') / sent, mainMicrosPerRequest: sum('mainMicros') / sent };
}

/** One window of `requests` requests: its wall time and this process's CPU time over it (all threads, main thread). */
export async function measuredWindow(drive, requests) {
  const cpuBefore = process.cpuUsage();
  const mainBefore = mainThreadMicros();
  const started = process.hrtime.bigint();
  await drive(requests);
  const elapsedMicros = Number(process.hrtime.bigint() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const main = mainBefore === undefined ? Number.NaN : mainThreadMicros() - mainBefore;
  return { requests, elapsedMicros, cpuMicros: cpu.user + cpu.system, mainMicros: main };
}

/**
 * For a worker forked by a coordinator that interleaves variants window by window (interleaved.mjs): says it is
 * ready, then runs a measured window for each `{ window: n }` it is sent and answers with its figures, until sent
 * `{ stop: true }`.
 */
export function windowsOnRequest(drive) {
  return new Promise((resolve) => {
    process.on('message', async (message) => {
      if (message.stop === true) {
        process.removeAllListeners('message');
        resolve();
        return;
      }
      process.send({ window: await measuredWindow(drive, message.window) });
    });
    process.send({ ready: true });
  });
}

/**
 * A worker's measurement, however it was started. Run by hand (or by a benchmark that runs it process after
 * process), it warms up with `warmUp` requests and times `requests` more (timedWindows). Forked by interleaved.mjs
 * (an IPC channel), `requests` is the warm-up, then it runs the windows its coordinator asks for, and the figures are
 * the coordinator's (`undefined` here).
 */
export async function measureOrServeWindows(drive, requests, warmUp) {
  if (process.send === undefined) {
    await drive(warmUp);
    return timedWindows(drive, requests);
  }
  await drive(requests);
  await windowsOnRequest(drive);
  return { rps: undefined, cpuMicrosPerRequest: undefined, mainMicrosPerRequest: undefined };
}
