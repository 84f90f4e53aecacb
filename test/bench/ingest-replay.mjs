// Ingest CPU of two builds, paired: the same recorded OTLP bodies as ingest.mjs's (lib/ingest-bodies.mjs) replayed
// through each build's decode → normalise → distinct-id limit → SQLite apply → fold, in a process of its own per run,
// without HTTP (workers/ingest-replay.mjs), the builds alternating ABBA… BENCH_PAIRS times. What it reports is the
// median over the pairs of this build's CPU divided by the baseline's (all threads, and the main thread), with the
// 95 % interval of that median, and the same for the main thread's CPU in each stage: a per-pair ratio cancels most of a
// shared machine's drift, which whole HTTP runs minutes apart do not.
//
//   npm run build && node test/bench/ingest-replay.mjs
//   env: BENCH_BASELINE (another built checkout; default this one, against itself), BENCH_PAIRS (10), BENCH_INSTANCES
//   (200), BENCH_ROUNDS (6), BENCH_FLUSH_EVERY (100: bodies between two folds, about what the collector's one-second
//   fold interval sees at ingest.mjs's rate), BENCH_TEMPORALITY (delta | cumulative), BENCH_PROFILE_DIR (a CPU profile
//   of every run's steady bodies, named by build and pair).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { checkExact } from './lib/exactness.mjs';
import { ingestBodies } from './lib/ingest-bodies.mjs';
import { median, medianInterval, percent } from './lib/paired-stats.mjs';
import { size } from './lib/smoke.mjs';

const run = promisify(execFile);
const WORKER = fileURLToPath(new URL('./workers/ingest-replay.mjs', import.meta.url));
const HERE = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const BASELINE = resolve(process.env.BENCH_BASELINE ?? HERE);
const PAIRS = Number(process.env.BENCH_PAIRS ?? size(10, 1));
const INSTANCES = Number(process.env.BENCH_INSTANCES ?? size(200, 25));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? size(6, 2));
const FLUSH_EVERY = Number(process.env.BENCH_FLUSH_EVERY ?? 100);
const CUMULATIVE = (process.env.BENCH_TEMPORALITY ?? 'delta') === 'cumulative';
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR;
if (PROFILE_DIR !== undefined) mkdirSync(PROFILE_DIR, { recursive: true });

const loads = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');
const data = ingestBodies({ instances: INSTANCES, rounds: ROUNDS, cumulative: CUMULATIVE });
const dir = mkdtempSync(join(tmpdir(), 'extscope-replay-'));
const bodiesFile = join(dir, 'bodies.bin');
const all = [...data.warmup.bodies, ...data.bodies];
writeFileSync(
  bodiesFile,
  Buffer.concat(
    all.flatMap((body) => {
      const length = Buffer.alloc(4);
      length.writeUInt32LE(body.length);
      return [length, body];
    }),
  ),
);
console.log(
  `ingest replay: ${INSTANCES} instances, ${data.streams} streams; ${data.warmup.bodies.length} warm-up bodies (unmeasured) + ${data.bodies.length} steady bodies, ` +
    `${data.counterPoints} counter points, in process (no HTTP), one export at a time, a fold every ${FLUSH_EVERY} bodies and at the end; ` +
    `${PAIRS} pairs, the order alternating; this checkout against ${BASELINE === HERE ? 'itself' : BASELINE}`,
);
console.log(`load average at start: ${loads()} (2 vCPU, shared)`);

const builds = { 'this checkout': HERE, baseline: BASELINE };
/** One run of one build, in a fresh process: the worker's figures. */
async function replay(name, pair) {
  const db = join(dir, `${name === 'baseline' ? 'base' : 'this'}-${pair}.db`);
  const profile = PROFILE_DIR === undefined ? [] : [join(PROFILE_DIR, `${name === 'baseline' ? 'base' : 'this'}-${pair}.cpuprofile`)];
  try {
    const { stdout } = await run(process.execPath, [WORKER, builds[name], bodiesFile, String(data.warmup.bodies.length), String(FLUSH_EVERY), db, ...profile], {
      maxBuffer: 16 * 2 ** 20,
    });
    return JSON.parse(stdout.trim().split('\n').at(-1));
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${db}${suffix}`, { force: true });
  }
}

const runs = { 'this checkout': [], baseline: [] };
try {
  for (let pair = 0; pair < PAIRS; pair++) {
    // ABBA: each build goes first as often as the other.
    const order = pair % 2 === 0 ? ['this checkout', 'baseline'] : ['baseline', 'this checkout'];
    for (const name of order) runs[name].push(await replay(name, pair));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const perThousand = (run, micros) => (1000 * micros) / 1e6 / run.exports;
/** This build over the baseline, pair by pair: the median ratio and its 95 % interval. */
function paired(pick) {
  const ratios = runs['this checkout'].map((run, pair) => pick(run) / pick(runs.baseline[pair]));
  const [low, high] = medianInterval(ratios);
  return `${(100 * median(ratios)).toFixed(1)} % (median ${percent(median(ratios))}, 95 % interval ${percent(low)}..${percent(high)})`;
}
const seconds = (name, pick) => median(runs[name].map(pick)).toFixed(2);
console.log(
  `CPU per 1,000 steady exports, all threads: this checkout ${seconds('this checkout', (run) => perThousand(run, run.cpuMicros))} s, ` +
    `baseline ${seconds('baseline', (run) => perThousand(run, run.cpuMicros))} s; this checkout takes ${paired((run) => run.cpuMicros)} of the baseline's`,
);
console.log(
  `main thread:                              this checkout ${seconds('this checkout', (run) => perThousand(run, run.mainMicros))} s, ` +
    `baseline ${seconds('baseline', (run) => perThousand(run, run.mainMicros))} s; this checkout takes ${paired((run) => run.mainMicros)} of the baseline's`,
);
for (const stage of Object.keys(runs.baseline[0].stages)) {
  console.log(
    `  ${`${stage} (main thread)`.padEnd(38)} this checkout ${seconds('this checkout', (run) => perThousand(run, 1000 * run.stages[stage]))} s, ` +
      `baseline ${seconds('baseline', (run) => perThousand(run, 1000 * run.stages[stage]))} s; this checkout takes ${paired((run) => run.stages[stage])}`,
  );
}
console.log(`load average at end: ${loads()}`);
const expected = data.warmup.requestsSent + data.requestsSent;
for (const [name, list] of Object.entries(runs)) {
  list.forEach((run, index) => {
    checkExact(`${name}, run ${index + 1}: requests applied of those sent`, run.requestsApplied, expected);
    checkExact(`${name}, run ${index + 1}: requests folded into the matrix of those sent`, run.requestsFolded, expected);
  });
}
