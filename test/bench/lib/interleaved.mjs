// The benchmarks' one way of comparing variants on a machine whose speed drifts: never a baseline timed once beside
// a variant timed later, but every variant measured in turn, the order rotating, so each sees the same stretches of
// the drift. `interleavedRound` does it window by window for variants each in a warm process of its own (the worker
// calls windowsOnRequest from timed-windows.mjs once warm, directly or through measureOrServeWindows); `alternated`
// for any measurement the caller runs itself (windows in one process, whole runs, live servers).
import { fork } from 'node:child_process';

/** A forked worker that answers one message at a time. */
function startWorker(script, args) {
  const child = fork(script, args, { execArgv: ['--expose-gc'], stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
  let stopping = false;
  // Any exit but the one `stop` asks for fails whatever is waiting on the worker.
  const exited = new Promise((resolve, reject) =>
    child.once('exit', (code) => (stopping && code === 0 ? resolve() : reject(new Error(`${script} ${args.join(' ')} exited ${code}`)))),
  );
  const next = () => Promise.race([new Promise((resolve) => child.once('message', resolve)), exited]);
  return {
    ready: next(),
    async window(requests) {
      const answer = next();
      child.send({ window: requests });
      return (await answer).window;
    },
    async stop() {
      stopping = true;
      child.send({ stop: true });
      await exited;
      return JSON.parse(stdout);
    },
  };
}

/**
 * A variant's figures over a round's summed windows: requests/s, CPU µs per request (all threads, main thread),
 * the main thread's collection pauses and the rest of its time in µs per request, and young- and old-generation collections per 1,000 requests.
 */
export const roundFigures = (sums) => ({
  rps: sums.requests / (sums.elapsedMicros / 1e6),
  cpu: sums.cpuMicros / sums.requests,
  main: sums.mainMicros / sums.requests,
  gc: sums.gcMicros / sums.requests,
  outsideGc: (sums.mainMicros - sums.gcMicros) / sums.requests,
  minorGcs: (sums.minorGcs / sums.requests) * 1000,
  majorGcs: (sums.majorGcs / sums.requests) * 1000,
});

/**
 * One round: a fresh process per variant (`argsOf(variant)`), warmed, then `windows` windows of `requests` each
 * per variant, the order of the variants rotating window by window. Resolves to, per variant, the summed windows
 * ({requests, elapsedMicros, cpuMicros, mainMicros, gcMicros, minorGcs, majorGcs}) and the worker's final report.
 */
export async function interleavedRound(script, variants, argsOf, windows, requests) {
  // Warmed at once, then one unmeasured window each, in turn. Warmed one after another, the first sat idle through
  // the others' warm-up (half a minute with 20,000 requests behind node:http) and came back slower: on loopback, the
  // variant started first cost 4 to 63 % (median 13 %) more CPU a request than the other in all 12 rounds of a run,
  // whichever of the two it was. (V8 shrinks an idle process's heap; what else it undoes was not traced.)
  const workers = Object.fromEntries(variants.map((variant) => [variant, startWorker(script, argsOf(variant))]));
  await Promise.all(variants.map((variant) => workers[variant].ready));
  for (const variant of variants) await workers[variant].window(requests);
  const sums = Object.fromEntries(variants.map((variant) => [variant, {}]));
  for (let w = 0; w < windows; w++) {
    for (const variant of variants.map((_, index) => variants[(index + w) % variants.length])) {
      const measured = await workers[variant].window(requests);
      for (const [key, value] of Object.entries(measured)) sums[variant][key] = (sums[variant][key] ?? 0) + value;
    }
  }
  const result = {};
  for (const variant of variants) result[variant] = { ...sums[variant], report: await workers[variant].stop() };
  return result;
}

/**
 * Runs `measure(variant, index)` `times` times for every variant, the order rotating each time, so that every
 * variant (the baseline too) is measured as often as the others and at as many moments of the machine's drift;
 * never a baseline timed once beside a variant timed later. Resolves to each variant's results, in order.
 */
export async function alternated(variants, times, measure) {
  const results = Object.fromEntries(variants.map((variant) => [variant, []]));
  for (let index = 0; index < times; index++) {
    for (const variant of variants.map((_, offset) => variants[(offset + index) % variants.length])) results[variant].push(await measure(variant, index));
  }
  return results;
}
