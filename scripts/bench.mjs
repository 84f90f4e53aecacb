// The runner behind `npm run bench`: the authoritative set, whose figures BENCHMARKS.md leads with, within 30 minutes
// on the 2-core machine; `npm run bench:all` adds the benchmarks run on demand (a narrower question each, or a slow
// harness: callgrind, many alternating windows). Each runs at full size, one after another; the runner prints each
// one's wall time and the total, and stops at the first that exits non-zero (a broken exactness check does).
//
//   npm run bench, npm run bench:all (the benchmarks are test/bench/*.mjs)
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const AUTHORITATIVE = [
  ['agent-overhead.mjs'],
  ['agent-exit.mjs'],
  ['compare-sentry.mjs'],
  ['agent-install.mjs'],
  ['ingest.mjs', '--backend', 'both'],
  ['matrix.mjs', '--backend', 'both'],
  ['ingest-stall.mjs'],
  ['alert-delivery.mjs'],
  ['dashboard.mjs'],
];
const ON_DEMAND = [
  ['agent-cost.mjs'],
  ['agent-path.mjs'],
  ['agent-stdio.mjs'],
  ['agent-http.mjs', 'loopback'],
  ['agent-http.mjs', 'entry'],
  ['agent-instructions.mjs', 'entry'],
  ['agent-instructions.mjs', 'stdio'],
  ['server-unknown-matrix.mjs'],
  ['alert-evaluation.mjs'],
  ['wrap-proxy.mjs'],
  // Without BENCH_BASELINE it pairs this checkout with itself: the noise floor of its ratios.
  ['ingest-replay.mjs'],
];

const runs = process.argv.includes('--all') ? [...AUTHORITATIVE, ...ON_DEMAND] : AUTHORITATIVE;
const minutes = (ms) => `${(ms / 60_000).toFixed(1)} min`;
const started = performance.now();
const times = [];
for (const [file, ...args] of runs) {
  const label = [file, ...args].join(' ');
  console.log(`\n=== ${label}`);
  const t0 = performance.now();
  const { status, signal } = spawnSync(process.execPath, [fileURLToPath(new URL(`../test/bench/${file}`, import.meta.url)), ...args], { stdio: 'inherit' });
  times.push([label, performance.now() - t0]);
  if (status !== 0) {
    console.error(`\n${label} failed (${signal ?? `exit ${status}`}) after ${minutes(performance.now() - t0)}`);
    process.exit(1);
  }
}
console.log(`\n${times.map(([label, ms]) => `${label.padEnd(36)} ${minutes(ms)}`).join('\n')}\n${'all'.padEnd(36)} ${minutes(performance.now() - started)}`);
