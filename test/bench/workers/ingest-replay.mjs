// One replay of recorded OTLP bodies through one built checkout's ingest path, in this process, without HTTP: decode →
// normalise → distinct-id limit → the SQLite store's apply, folding every FLUSH_EVERY bodies and at the end, as the
// collector's pipeline does (collector/service.ts), one export at a time. The warm-up bodies (every stream's first
// export) are replayed unmeasured; then the steady ones, measured. Prints one JSON line: the CPU of the process (all
// threads) and of its main thread, the main thread's CPU by stage, and what was counted, for ingest-replay.mjs.
//
//   node test/bench/workers/ingest-replay.mjs <checkout> <bodies file> <warm-up bodies> <flush every> <database file> [<profile file>]
// With a profile file: a CPU profile of the steady bodies only, written there.
import { openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { mainThreadMicros } from '../lib/main-thread-cpu.mjs';

const [checkout, bodiesFile, warmupArg, flushArg, dbPath, profileFile] = process.argv.slice(2);
const WARMUP = Number(warmupArg);
const FLUSH_EVERY = Number(flushArg);
const dist = (path) => import(pathToFileURL(join(resolve(checkout), 'dist', path)).href);

/** The bodies as ingest-replay.mjs wrote them: each a 4-byte length, then its bytes. */
function readBodies(file) {
  const all = readFileSync(file);
  const bodies = [];
  for (let offset = 0; offset < all.length;) {
    const length = all.readUInt32LE(offset);
    bodies.push(all.subarray(offset + 4, offset + 4 + length));
    offset += 4 + length;
  }
  return bodies;
}

const [{ resolveConfig }, { openStore }, { NormaliseMetrics }, { ExtensionIdLimit }, { decodeMetricsRequest }, { MS_PER_HOUR }] = await Promise.all([
  dist('collector/config.js'),
  dist('collector/store/open.js'),
  dist('collector/processor/normalise-metrics/index.js'),
  dist('collector/processor/extension-id-limit/index.js'),
  dist('collector/otlp/codec.js'),
  dist('collector/model/time.js'),
]);
const config = resolveConfig({ dbPath, port: 0 });
const { limits, clock } = config;
// The options both builds take; no fold interval: the replay folds itself, at the same points on both.
const store = await openStore({
  db: dbPath,
  clock,
  retention: config.retention,
  synchronous: config.synchronous,
  examplesPerCell: config.examplesPerCell,
  maxValuesPerDimension: limits.maxValuesPerDimension,
  maxInstances: limits.maxInstances,
  warn: (message) => process.stderr.write(`${message}\n`),
});

/**
 * The main thread's CPU by stage, in ms: its schedstat, read at each stage's end (a few microseconds a read, through
 * one open file). The kernel updates it at ticks and switches, so one reading can be a tick behind, but the error of a
 * difference averages out over thousands of stages; wall time would count the waits for a core of a shared machine.
 */
const schedstat = openSync('/proc/thread-self/schedstat', 'r');
const buffer = Buffer.alloc(64);
const threadMs = () => Number(buffer.toString('latin1', 0, readSync(schedstat, buffer, 0, 64, 0)).split(' ')[0]) / 1e6;
const stages = { decode: 0, normalise: 0, idLimit: 0, apply: 0, fold: 0 };
let mark = 0;
const lap = (stage) => {
  const now = threadMs();
  stages[stage] += now - mark;
  mark = now;
};
let requestsApplied = 0;
const end = {
  async consumeMetrics(batch) {
    lap('idLimit');
    const { applied, duplicates, rejections = [], counts } = await store.ingest.applyMetrics(batch);
    lap('apply');
    for (const count of counts) if (count.dims.kind === 0) requestsApplied += count.count;
    return { applied, duplicates, ignored: new Map(), rejections, rejectedReason: undefined, counts };
  },
};
const idLimit = new ExtensionIdLimit({ maxIdsPerInstanceHour: limits.maxExtensionIdsPerInstanceHour }, end, store.idLimits);
const timedIdLimit = {
  consumeMetrics(batch) {
    lap('normalise');
    return idLimit.consumeMetrics(batch);
  },
};
const metrics = new NormaliseMetrics(
  { maxAttributeLength: limits.maxAttributeLength, maxFutureSkewMs: limits.maxFutureSkewMs, dedupWindowMs: config.retention.dedupHours * MS_PER_HOUR, clock },
  timedIdLimit,
);

async function replay(bodies) {
  for (let index = 0; index < bodies.length; index++) {
    mark = threadMs();
    const request = decodeMetricsRequest(bodies[index], 'protobuf');
    lap('decode');
    const outcome = await metrics.consumeMetrics(request);
    if (outcome.rejections.length > 0) throw new Error(`body ${index}: ${JSON.stringify(outcome.rejections)}`);
    if ((index + 1) % FLUSH_EVERY === 0 || index === bodies.length - 1) {
      mark = threadMs();
      await store.lifecycle.flush();
      lap('fold');
    }
  }
}

const bodies = readBodies(bodiesFile);
await replay(bodies.slice(0, WARMUP));
for (const stage of Object.keys(stages)) stages[stage] = 0;
const profiler = profileFile === undefined ? undefined : new Session();
if (profiler !== undefined) {
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.start');
}
const cpuBefore = process.cpuUsage();
const mainBefore = mainThreadMicros();
await replay(bodies.slice(WARMUP));
const cpu = process.cpuUsage(cpuBefore);
const mainMicros = mainThreadMicros() - mainBefore;
if (profiler !== undefined) writeFileSync(profileFile, JSON.stringify((await profiler.post('Profiler.stop')).profile));
await store.lifecycle.close();
// What the fold made of it: the requests in the per-service request cells' minutes.
const db = new Database(dbPath, { readonly: true });
const folded = db
  .prepare('SELECT coalesce(sum(m.count), 0) FROM cell_minute m JOIN cells c ON c.id = m.cell_id WHERE c.scope = 0 AND c.kind = 0')
  .pluck()
  .get();
db.close();
process.stdout.write(
  `${JSON.stringify({ cpuMicros: cpu.user + cpu.system, mainMicros, stages, requestsApplied, requestsFolded: Number(folded), exports: bodies.length - WARMUP })}\n`,
);
