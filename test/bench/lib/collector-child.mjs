// The collector as a child process (the built CLI), for the collector benchmarks. Resolves with its URL once it
// logs that it listens and its /readyz answers ready (database open, schema current), never after a fixed wait.
import { spawn } from 'node:child_process';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../../dist/bin/extscope.js', import.meta.url));

/** The CLI of another built checkout (`BENCH_BASELINE=<its folder>`), to run the same variant on both builds side by side. */
export function baselineCli(folder) {
  return join(resolve(folder), 'dist/bin/extscope.js');
}

/** `ipc`: with an IPC channel to the child (for a preloaded probe such as lib/pg-round-trip-probe.mjs). */
export function startCollectorChild(dbPath, { env = {}, nodeArgs = [], cli = CLI, ipc = false } = {}) {
  const child = spawn(process.execPath, [...nodeArgs, cli, 'collector', '--port', '0', '--db', dbPath], {
    env: { ...process.env, EXTSCOPE_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit', ...(ipc ? ['ipc'] : [])],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk) => {
      if (output === undefined) return;
      output += chunk;
      const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
      if (match) {
        output = undefined;
        ready(match[1]).then(() => resolve({ child, url: match[1] }), reject);
      }
    });
    child.once('exit', (code) => reject(new Error(`collector exited ${code}: ${output ?? ''}`)));
  });
}

/** Polls `GET /readyz` until it answers 200 (every 20 ms, for at most a minute). */
export async function ready(url) {
  for (const started = Date.now(); Date.now() - started < 60_000; await new Promise((resolve) => setTimeout(resolve, 20))) {
    const answer = await fetch(`${url}/readyz`).catch(() => undefined);
    if (answer?.status === 200) return;
    await answer?.body?.cancel();
  }
  throw new Error(`${url}/readyz did not answer ready within a minute`);
}

/** Sends `message` to a collector child started with `ipc` and resolves with the `field` of the first answer that has it. */
function ask(child, message, field) {
  return new Promise((resolve) => {
    const answer = (reply) => {
      if (reply?.[field] === undefined) return;
      child.off('message', answer);
      resolve(reply[field]);
    };
    child.on('message', answer);
    child.send(message);
  });
}

/** Resolves with the round trips to PostgreSQL a collector child made so far (started with `ipc` and `--import` lib/pg-round-trip-probe.mjs). */
export function roundTrips(child) {
  return ask(child, 'pg-round-trips', 'pgRoundTrips');
}

/** Starts measuring allocation, collections and threads' CPU in a child started with `ipc` and `--import` lib/heap-probe.mjs. */
export function heapStart(child) {
  return ask(child, 'heap-start', 'heapStarted');
}

/** Stops it: resolves with `{ allocated, collections, threads }` since {@link heapStart} (lib/heap-probe.mjs). */
export function heapStop(child) {
  return ask(child, 'heap-stop', 'heap');
}

/**
 * The warm-up read a collector makes once its retention pass at start is over (the last 7 days, collector/warm-up.ts):
 * `{ done, seconds }` as `/metrics` says now, or undefined from a build that does not report it.
 */
export async function warmUpState(url) {
  const name = 'extscope_collector_warm_up_duration_seconds';
  const text = await (await fetch(`${url}/metrics`)).text();
  if (!text.includes(name)) return undefined;
  const count = new RegExp(`^${name}_count (\\d+)$`, 'm').exec(text);
  const sum = new RegExp(`^${name}_sum (\\S+)$`, 'm').exec(text);
  const done = count !== null && Number(count[1]) >= 1;
  return { done, seconds: done && sum !== null ? Number(sum[1]) : undefined };
}

/**
 * Waits (at most ten minutes) for the retention pass a collector runs at start, so that the reads measured are not
 * made beside it (they wait between its chunks; it drops old buckets series by series, seconds at 10,000 instances;
 * it runs again hourly). Resolves with the pass's seconds, or undefined from a build that does not report it on
 * `/metrics`.
 */
export async function startupMaintenance(url) {
  const name = 'extscope_collector_maintenance_duration_seconds';
  for (const started = Date.now(); Date.now() - started < 600_000; await new Promise((resolve) => setTimeout(resolve, 200))) {
    const text = await (await fetch(`${url}/metrics`)).text();
    if (!text.includes(name)) return undefined;
    const count = new RegExp(`^${name}_count (\\d+)$`, 'm').exec(text);
    const sum = new RegExp(`^${name}_sum (\\S+)$`, 'm').exec(text);
    if (count !== null && sum !== null && Number(count[1]) >= 1) return Number(sum[1]);
  }
  throw new Error(`${url}: the retention pass run at start did not finish within ten minutes`);
}
