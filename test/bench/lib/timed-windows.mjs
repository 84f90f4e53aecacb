import { PerformanceObserver, constants } from 'node:perf_hooks';
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

/**
 * The garbage collections V8 has reported so far (PerformanceObserver `gc` entries): the main thread's pauses for
 * them, how many young- and old-generation ones. An entry reaches the observer two turns of the event loop after its
 * collection (tried: one turn delivered none), so a window's are read after two.
 */
const collections = { gcMicros: 0, minorGcs: 0, majorGcs: 0 };
let gcObserver;
function observeCollections() {
  if (gcObserver !== undefined) return;
  gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      collections.gcMicros += entry.duration * 1000;
      if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) collections.majorGcs++;
      else if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) collections.minorGcs++;
    }
  });
  gcObserver.observe({ entryTypes: ['gc'] });
}
const delivered = async () => {
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
  return { ...collections };
};

/**
 * This process's CPU time so far (all threads, main thread), then the collections reported so far (read after the
 * turns that deliver them).
 */
async function usage() {
  observeCollections();
  const cpu = process.cpuUsage();
  const main = mainThreadMicros();
  return { cpu, main, gc: await delivered() };
}

/**
 * Drives one window of `requests` requests counted from `before` (a {@link usage}) to its end: its wall time, this
 * process's CPU time (all threads, main thread) and the collections (the main thread's pauses for them, how many
 * young- and old-generation ones); and the usage at its end.
 */
async function windowFrom(before, drive, requests) {
  const started = process.hrtime.bigint();
  await drive(requests);
  const elapsedMicros = Number(process.hrtime.bigint() - started) / 1000;
  const after = await usage();
  const cpuMicros = after.cpu.user - before.cpu.user + (after.cpu.system - before.cpu.system);
  const mainMicros = before.main === undefined ? Number.NaN : after.main - before.main;
  const gc = Object.fromEntries(Object.keys(collections).map((key) => [key, after.gc[key] - before.gc[key]]));
  return { window: { requests, elapsedMicros, cpuMicros, mainMicros, ...gc }, after };
}

/** One window of `requests` requests, counted from its start (see {@link windowFrom}). */
export async function measuredWindow(drive, requests) {
  return (await windowFrom(await usage(), drive, requests)).window;
}

/**
 * For a worker forked by a coordinator that interleaves variants window by window (interleaved.mjs): says it is
 * ready, then runs a measured window for each `{ window: n }` it is sent and answers with its figures, until sent
 * `{ stop: true }`.
 * A window's CPU and collections are counted from the end of the one before, so they include what the process did
 * while it waited for its turn: V8 finishes a full collection the window started once the process is idle (in runs
 * of 30 windows, none of the old-generation collections fell inside a window), and counted from the window's start
 * that work was measured for no variant.
 */
export function windowsOnRequest(drive) {
  return new Promise((resolve) => {
    let since;
    process.on('message', async (message) => {
      if (message.stop === true) {
        process.removeAllListeners('message');
        resolve();
        return;
      }
      const { window, after } = await windowFrom(since ?? (await usage()), drive, message.window);
      since = after;
      process.send({ window });
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
