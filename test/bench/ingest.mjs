// Ingest throughput: counter points per second through POST /v1/metrics (protobuf, one export per instance and
// minute, as the agent sends them, from many instances at once) into a collector, measured side by side in one
// run with raw loops writing the same rows (the limit): on SQLite, one collector next to plain better-sqlite3
// upsert loops; on PostgreSQL, one collector and three replicas on one database (senders spread requests over them
// round-robin, as a load balancer would) next to a raw `pg` loop (one transaction per export: the dedup keys, then
// the five rollup levels as set-based upserts). Every variant, raw loops included, runs BENCH_REPEATS times, the
// order rotating; the medians are reported.
//
//   npm run build && node test/bench/ingest.mjs [--backend sqlite|postgres|both]
//   env: BENCH_REPEATS (3), BENCH_PROFILE_DIR (CPU profile of the collector), BENCH_INSTANCES (500; 200 with
//   PostgreSQL), BENCH_ROUNDS (12; 6 with PostgreSQL), BENCH_CONCURRENCY (8), BENCH_SYNC (normal|full), BENCH_BATCH (1 =
//   one resource per request as the agent sends; >1 = resources per request, as an OpenTelemetry Collector forwards),
//   BENCH_TEMPORALITY (delta | cumulative: running totals per stream since one process start, as the agent's default),
//   BENCH_BASELINE (another built checkout run beside this one: SQLite and one PostgreSQL replica each, paired; and its
//   OTLP decoder beside this one's, in process; BENCH_DECODE_ONLY=1: only the decoders),
//   BENCH_REPLICAS (1,2,3: the PostgreSQL variants), BENCH_PG_DATABASE or BENCH_PG (lib/postgres-db.mjs), BENCH_PIN=1 (PostgreSQL on one core, the rest on the other:
//   lib/pinning.mjs), BENCH_HEAP_DIR (each collector's allocation, collections and threads' CPU over the timed rounds,
//   its allocation profile written there: lib/heap-probe.mjs; BENCH_HEAP_SURVIVORS=1: of what outlived a scavenge; BENCH_HEAP_CPU=1: its
//   CPU profile over the timed rounds too). On PostgreSQL it also samples what the backends wait
//   on (lib/pg-waits.mjs).

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { backendsFrom } from './lib/backends.mjs';
import { baselineCli, heapStart, heapStop, roundTrips, startCollectorChild } from './lib/collector-child.mjs';
import { checkExact } from './lib/exactness.mjs';
import { ingestBodies } from './lib/ingest-bodies.mjs';
import { alternated } from './lib/interleaved.mjs';
import { median } from './lib/paired-stats.mjs';
import { sampleWaits } from './lib/pg-waits.mjs';
import { PINNED, pinApart } from './lib/pinning.mjs';
import { createBenchDatabase, pg } from './lib/postgres-db.mjs';
import { cpuMeter } from './lib/proc-cpu.mjs';
import { size } from './lib/smoke.mjs';

const backends = backendsFrom(process.argv.slice(2));
const ROUND_TRIP_PROBE = new URL('./lib/pg-round-trip-probe.mjs', import.meta.url).href;
const HEAP_PROBE = new URL('./lib/heap-probe.mjs', import.meta.url).href;
const HEAP_DIR = process.env.BENCH_HEAP_DIR;
// The collectors write their profiles there: made here, once, rather than failing in a child at the run's end.
if (HEAP_DIR !== undefined) mkdirSync(HEAP_DIR, { recursive: true });
const withPostgres = backends.includes('postgres');
const INSTANCES = Number(process.env.BENCH_INSTANCES ?? size(withPostgres ? 200 : 500, 25));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? size(withPostgres ? 6 : 12, 2));
const REPEATS = Number(process.env.BENCH_REPEATS ?? size(3, 1));
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const SYNC = process.env.BENCH_SYNC ?? 'normal';
const BATCH = Number(process.env.BENCH_BATCH ?? 1);
const REPLICAS = (process.env.BENCH_REPLICAS ?? '1,2,3').split(',').map(Number);
const TEMPORALITY = process.env.BENCH_TEMPORALITY ?? 'delta';
const CUMULATIVE = TEMPORALITY === 'cumulative';

function post(agent, url, body) {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/v1/metrics`,
      { method: 'POST', agent, headers: { 'content-type': 'application/x-protobuf', 'content-length': body.length } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends every body (retrying a 503, as an exporter would), spread round-robin over `urls`; other answers fail. */
async function sendAll(agent, urls, bodies) {
  let next = 0;
  let retries = 0;
  let failures = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < bodies.length) {
        const index = next++;
        for (let attempt = 0; ; attempt++) {
          const status = await post(agent, urls[(index + attempt) % urls.length], bodies[index]);
          if (status === 200) break;
          if (status !== 503 || attempt > 20) {
            failures++;
            break;
          }
          retries++;
        }
      }
    }),
  );
  return { retries, failures };
}

/** Through `replicas` collectors on one database (`db`: a SQLite path or a PostgreSQL URL). */
async function throughCollectors(data, db, replicas, database = undefined, cli = undefined) {
  const onPostgres = db.startsWith('postgres');
  const children = await Promise.all(
    Array.from({ length: replicas }, () =>
      startCollectorChild(db, {
        cli,
        env: { EXTSCOPE_SYNCHRONOUS: SYNC, EXTSCOPE_MAX_IN_FLIGHT: '64' },
        nodeArgs: [
          ...(process.env.BENCH_PROFILE_DIR === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`]),
          ...(onPostgres ? ['--import', ROUND_TRIP_PROBE] : []),
          ...(HEAP_DIR === undefined ? [] : ['--import', HEAP_PROBE]),
        ],
        ipc: onPostgres || HEAP_DIR !== undefined,
      }),
    ),
  );
  const statements = async () => (onPostgres ? (await Promise.all(children.map(({ child }) => roundTrips(child)))).reduce((sum, n) => sum + n, 0) : undefined);
  const urls = children.map((child) => child.url);
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const visible = async () => (await (await fetch(`${urls[0]}/api/v1/matrix?from=-1d`)).json()).rows.reduce((sum, row) => sum + row.requests, 0);
  try {
    let started = performance.now();
    const warm = await sendAll(agent, urls, data.warmup.bodies);
    await visible();
    const warmupSeconds = (performance.now() - started) / 1000;
    started = performance.now();
    const spent = await cpuMeter(
      children.map(({ child }) => child.pid),
      database === undefined ? undefined : { url: db, database },
    );
    const waits = database === undefined ? undefined : sampleWaits(db, database);
    // In two parts, the rounds before the hour turns and those from then on, so that each has its round trips.
    const statementsBefore = await statements();
    if (HEAP_DIR !== undefined) await Promise.all(children.map(({ child }) => heapStart(child)));
    const early = await sendAll(agent, urls, data.bodies.slice(0, data.beforeHour));
    const statementsAtHour = await statements();
    const late = await sendAll(agent, urls, data.bodies.slice(data.beforeHour));
    const statementsAfter = await statements();
    const steady = { failures: early.failures + late.failures, retries: early.retries + late.retries };
    const statementsSent = onPostgres ? { all: statementsAfter - statementsBefore, fromHour: statementsAfter - statementsAtHour } : undefined;
    // Everything visible to queries (what is pending folded into the rollups) is part of the measured time.
    const counted = await visible();
    const seconds = (performance.now() - started) / 1000;
    const cpu = await spent();
    const heap = HEAP_DIR === undefined ? undefined : await Promise.all(children.map(({ child }) => heapStop(child)));
    return {
      heap,
      warmupSeconds,
      seconds,
      cpu,
      statementsSent,
      waits: await waits?.(),
      failures: warm.failures + steady.failures,
      retries: warm.retries + steady.retries,
      counted,
    };
  } finally {
    agent.destroy();
    await Promise.all(
      children.map(({ child }) => {
        child.kill('SIGTERM');
        return new Promise((resolve) => child.once('exit', resolve));
      }),
    );
  }
}

async function onSqlite(data, cli = undefined) {
  const dir = mkdtempSync(join(tmpdir(), 'extscope-bench-'));
  try {
    return await throughCollectors(data, join(dir, 'bench.db'), 1, undefined, cli);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function onPostgres(data, replicas, cli = undefined) {
  const database = await createBenchDatabase(`ingest${replicas}`);
  try {
    return await throughCollectors(data, database.url, replicas, database.name, cli);
  } finally {
    await database.drop();
  }
}

/**
 * The limit, as plain better-sqlite3 loops over precomputed rows, one transaction per export, same pragmas:
 * `minimal` upserts each counter point into a per-minute table (what any store must at least do);
 * `equivalent` does the writes the collector's store does for it (dedup key; minute and hour rollups per
 * series; minute, hour and day rollups per matrix cell, per service and over all services), row by row.
 */
function rawLoop(data, kind) {
  const dir = mkdtempSync(join(tmpdir(), 'extscope-bench-raw-'));
  const db = new Database(join(dir, 'raw.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${SYNC === 'full' ? 'FULL' : 'NORMAL'}`);
    db.pragma('cache_size = -65536');
    const tables =
      kind === 'minimal'
        ? [['series_minute', 0, 1]]
        : [
            ['series_minute', 0, 1],
            ['series_hour', 0, 60],
            ['cell_minute', 1, 1],
            ['cell_hour', 1, 60],
            ['cell_day', 1, 1440],
            ['cell_minute', 6, 1],
            ['cell_hour', 6, 60],
            ['cell_day', 6, 1440],
          ];
    for (const table of new Set(tables.map(([name]) => name)))
      db.exec(`CREATE TABLE ${table} (owner INTEGER NOT NULL, bucket INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (owner, bucket)) WITHOUT ROWID`);
    db.exec(
      'CREATE TABLE applied_points (end_ns INTEGER NOT NULL, stream_id INTEGER NOT NULL, start_ns INTEGER NOT NULL, PRIMARY KEY (end_ns, stream_id, start_ns)) WITHOUT ROWID',
    );
    const upserts = tables.map(([table, owner, unit]) => [
      db.prepare(`INSERT INTO ${table} (owner, bucket, count) VALUES (?, ?, ?) ON CONFLICT (owner, bucket) DO UPDATE SET count = count + excluded.count`),
      owner,
      unit,
    ]);
    const dedup = db.prepare('INSERT OR IGNORE INTO applied_points (end_ns, stream_id, start_ns) VALUES (?, ?, ?)');
    const apply = db.transaction((rows) => {
      for (const row of rows) {
        if (kind !== 'minimal' && dedup.run(row[4], row[0], row[5]).changes === 0) continue;
        for (const [statement, owner, unit] of upserts) statement.run(row[owner], Math.floor(row[2] / unit), row[3]);
      }
    });
    for (const rows of data.warmup.rowBatches) apply(rows);
    const started = performance.now();
    for (const rows of data.rowBatches) apply(rows);
    return { seconds: (performance.now() - started) / 1000 };
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The same rows, written by hand: one transaction per export on CONCURRENCY connections, as the collectors get. */
async function rawPostgres(data) {
  const database = await createBenchDatabase('raw');
  const url = database.url;
  const pool = new pg.Pool({ connectionString: url, max: CONCURRENCY });
  pool.on('error', (error) => console.error(`raw loop: idle connection failed: ${error.message}`));
  try {
    await pool.query(`
      CREATE TABLE applied (end_ns bigint, stream_id bigint, start_ns bigint, PRIMARY KEY (end_ns, stream_id, start_ns));
      ${['s_minute', 's_hour', 'c_minute', 'c_hour', 'c_day'].map((table) => `CREATE TABLE ${table} (owner bigint, bucket bigint, count bigint NOT NULL, PRIMARY KEY (owner, bucket));`).join('\n')}`);
    const levels = [
      ['s_minute', 1, false],
      ['s_hour', 60, false],
      ['c_minute', 1, true],
      ['c_hour', 60, true],
      ['c_day', 1440, true],
    ];
    const apply = async (rows) => {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query('INSERT INTO applied SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) ORDER BY 1, 2, 3 ON CONFLICT DO NOTHING', [
          rows.map((row) => String(row[4])),
          rows.map((row) => row[0]),
          rows.map((row) => String(row[5])),
        ]);
        for (const [table, minutes, cells] of levels) {
          const sums = new Map();
          const add = (owner, bucket, value) => sums.set(`${owner}:${bucket}`, [owner, bucket, (sums.get(`${owner}:${bucket}`)?.[2] ?? 0) + value]);
          // A row: [stream, cell, minute, increment, end ns, start ns, all-services cell].
          for (const row of rows) {
            const bucket = Math.floor(row[2] / minutes);
            if (cells) {
              add(row[1], bucket, row[3]);
              add(row[6], bucket, row[3]);
            } else add(row[0], bucket, row[3]);
          }
          const list = [...sums.values()].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
          await client.query(
            `INSERT INTO ${table} SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) ORDER BY 1, 2 ON CONFLICT (owner, bucket) DO UPDATE SET count = ${table}.count + excluded.count`,
            [list.map((entry) => entry[0]), list.map((entry) => entry[1]), list.map((entry) => entry[2])],
          );
        }
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    };
    const run = async (batches) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < batches.length) await apply(batches[next++]);
        }),
      );
    };
    await run(data.warmup.rowBatches);
    const started = performance.now();
    await run(data.rowBatches);
    return { seconds: (performance.now() - started) / 1000 };
  } finally {
    await pool.end();
    await database.drop();
  }
}

const data = ingestBodies({ instances: INSTANCES, rounds: ROUNDS, batch: BATCH, cumulative: CUMULATIVE });
const bytes = data.bodies.reduce((sum, body) => sum + body.length, 0);
const expected = data.warmup.requestsSent + data.requestsSent;
console.log(
  `ingest: ${INSTANCES} instances, ${data.streams} streams; warm-up round (first export of every stream) + ${ROUNDS} one-minute rounds = ` +
    `${data.bodies.length} requests (${BATCH} resource(s) each), ${data.counterPoints} counter points + ${data.gaugePoints} gauge points, ` +
    `${(bytes / 1e6).toFixed(1)} MB protobuf; ${CONCURRENCY} concurrent senders; synchronous=${SYNC}; ${TEMPORALITY}; ${REPEATS} repeat(s) of every variant, the order rotating`,
);
console.log(
  `load average at start: ${loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')} (2 vCPU, shared)`,
);
/**
 * `BENCH_BASELINE=<folder>`: another checkout, built (`npm run build` there), run beside this one in the same
 * rotation — one SQLite collector and one PostgreSQL replica each — for a paired before/after of a change.
 */
const BASELINE = process.env.BENCH_BASELINE;
/**
 * With a baseline, the decoder alone too, in this process: this checkout's and the baseline's `decodeMetricsRequest`
 * (what the collectors' decode workers run) over every body, alternating, BENCH_REPEATS × 2 passes each after one
 * unmeasured pass (the first compiles the decoders); the median seconds of a pass.
 */
async function decodeOnly(bodies) {
  const codecs = {
    'this checkout': await import('../../dist/collector/otlp/codec.js'),
    baseline: await import(pathToFileURL(join(resolve(BASELINE), 'dist/collector/otlp/codec.js')).href),
  };
  for (const codec of Object.values(codecs)) for (const body of bodies) codec.decodeMetricsRequest(body, 'protobuf');
  // CPU seconds of this process, not wall time: on a shared machine, time waiting for a core is not the decoder's.
  const passes = await alternated(Object.keys(codecs), REPEATS * 2, (name) => {
    const started = process.cpuUsage();
    for (const body of bodies) codecs[name].decodeMetricsRequest(body, 'protobuf');
    const spent = process.cpuUsage(started);
    return (spent.user + spent.system) / 1e6;
  });
  const [mine, theirs] = [median(passes['this checkout']), median(passes.baseline)];
  console.log(
    `decode only (in process, ${bodies.length} bodies a pass, CPU seconds): this checkout ${mine.toFixed(2)} s, baseline ${theirs.toFixed(2)} s a pass; this checkout takes ${((100 * mine) / theirs).toFixed(1)} % of the baseline's time`,
  );
}
if (BASELINE !== undefined) await decodeOnly([...data.warmup.bodies, ...data.bodies]);
/** `BENCH_DECODE_ONLY=1` (with BENCH_BASELINE): only the decoders' comparison above. */
if (process.env.BENCH_DECODE_ONLY === '1') process.exit(0);
const variants = {
  ...(BASELINE !== undefined && backends.includes('sqlite') && { 'SQLite, 1 collector, baseline': () => onSqlite(data, baselineCli(BASELINE)) }),
  ...(BASELINE !== undefined && withPostgres && { 'PostgreSQL, 1 replica, baseline': () => onPostgres(data, 1, baselineCli(BASELINE)) }),
  ...(backends.includes('sqlite') && {
    'raw SQLite, minimal': () => rawLoop(data, 'minimal'),
    'raw SQLite, equivalent': () => rawLoop(data, 'equivalent'),
    'SQLite, 1 collector': () => onSqlite(data),
  }),
  ...(withPostgres && {
    'raw pg loop (same rows)': () => rawPostgres(data),
    ...Object.fromEntries(REPLICAS.map((replicas) => [`PostgreSQL, ${replicas} replica${replicas === 1 ? '' : 's'}`, () => onPostgres(data, replicas)])),
  }),
};
const unpin = PINNED ? pinApart() : undefined;
if (PINNED) console.log('pinned: PostgreSQL on CPU 0; the collectors, the raw loops and the senders on CPU 1');
let results;
try {
  results = await alternated(Object.keys(variants), REPEATS, (name) => variants[name]());
} finally {
  unpin?.();
}
const seconds = Object.fromEntries(Object.entries(results).map(([name, runs]) => [name, median(runs.map((run) => run.seconds))]));
const rate = (points, time) => Math.round(points / time).toLocaleString('en');
/** The median CPU seconds a variant's collectors (or database server) spent per 1,000 exports. */
const perThousand = (runs, part) => median(runs.map((run) => (1000 * run.cpu[part]) / data.bodies.length)).toFixed(2);
/** The median cores a variant's collectors (or database server) kept busy: CPU seconds over wall seconds. */
const coresUsed = (runs, part) => median(runs.map((run) => run.cpu[part] / run.seconds)).toFixed(2);
/** Collectors + database CPU per export against one SQLite collector's (SQLite's database work is in its collector's process). */
const cpuRatio = (name) =>
  !name.startsWith('PostgreSQL') || results['SQLite, 1 collector'] === undefined
    ? ''
    : ` (${(perThousand(results[name], 'total') / perThousand(results['SQLite, 1 collector'], 'total')).toFixed(2)}× SQLite's)`;
const share = (name, base) => (seconds[base] === undefined ? '' : `  ${((100 * seconds[base]) / seconds[name]).toFixed(1).padStart(5)} % of ${base}`);
for (const name of Object.keys(variants)) {
  const collector = results[name][0].counted !== undefined;
  if (name.endsWith(', baseline')) {
    const head = name.slice(0, -', baseline'.length);
    console.log(
      `${name.padEnd(26)} ${seconds[name].toFixed(2).padStart(6)} s  ${rate(data.counterPoints, seconds[name]).padStart(9)} counter points/s; this build at ${((100 * seconds[name]) / seconds[head]).toFixed(1)} % of the baseline's rate (${BASELINE}); CPU per 1,000 exports: collectors ${perThousand(results[name], 'collectors')} s, PostgreSQL ${perThousand(results[name], 'database')} s; ${pairedLine(results[head], results[name])}`,
    );
    if (results[name][0].heap !== undefined) console.log(`${''.padEnd(26)} ${heapLine(results[name])}`);
    continue;
  }
  const baseline = name.includes('SQLite') ? 'raw SQLite, equivalent' : 'raw pg loop (same rows)';
  const extra = !collector
    ? ''
    : `${name.startsWith('PostgreSQL') ? `${share(name, baseline)}${share(name, 'SQLite, 1 collector')}` : `${share(name, 'raw SQLite, minimal')}${share(name, baseline)}`}; warm-up ${rate(data.warmup.counterPoints, median(results[name].map((run) => run.warmupSeconds)))} points/s; 503 retries ${results[name].reduce((sum, run) => sum + run.retries, 0)}`;
  const trips =
    results[name][0].statementsSent === undefined
      ? ''
      : `; round trips to PostgreSQL per steady export ${median(results[name].map((run) => run.statementsSent.all / data.bodies.length)).toFixed(2)}, over the rounds from the hour's turn on ${median(results[name].map((run) => run.statementsSent.fromHour / (data.bodies.length - data.beforeHour))).toFixed(2)} (every statement the collectors sent over the timed rounds, the fold's and the distinct-id limit's included; rounds ${data.hourRound} to ${ROUNDS} of ${ROUNDS} are in the next hour)`;
  const cpu =
    results[name][0].cpu === undefined
      ? ''
      : `; CPU per 1,000 exports: collectors ${perThousand(results[name], 'collectors')} s, PostgreSQL ${perThousand(results[name], 'database')} s, together ${perThousand(results[name], 'total')} s${cpuRatio(name)}; cores in use over the timed rounds: collectors ${coresUsed(results[name], 'collectors')}, PostgreSQL ${coresUsed(results[name], 'database')}`;
  console.log(
    `${name.padEnd(26)} ${seconds[name].toFixed(2).padStart(6)} s  ${rate(data.counterPoints, seconds[name]).padStart(9)} counter points/s${extra}${cpu}${trips}`,
  );
  if (results[name][0].waits !== undefined) console.log(`${''.padEnd(26)} ${waitsLine(results[name])}`);
  if (results[name][0].heap !== undefined) console.log(`${''.padEnd(26)} ${heapLine(results[name])}`);
}
/**
 * This build against the baseline repeat by repeat (the two runs of a repeat are measured in the same rotation, so
 * minutes apart at most): the median of the per-repeat ratios of the rate and of the collectors' and database's CPU.
 */
function pairedLine(mine, theirs) {
  const ratio = (pick) => (100 * median(mine.map((run, index) => pick(run, theirs[index])))).toFixed(1);
  return `paired by repeat (median of ${mine.length} ratios): rate ${ratio((run, base) => base.seconds / run.seconds)} %, collectors' CPU ${ratio((run, base) => run.cpu.collectors / base.cpu.collectors)} %, collectors' and PostgreSQL's CPU ${ratio((run, base) => run.cpu.total / base.cpu.total)} % of the baseline's`;
}
/**
 * The collectors' allocation, collections and CPU by thread per 1,000 exports (medians; the collections' time is
 * what their pauses took on the main thread, the threads' CPU includes V8's helpers: concurrent marking, compiling).
 */
function heapLine(runs) {
  const per = (value) => (1000 * value) / data.bodies.length;
  const sum = (run, pick) => run.heap.reduce((total, heap) => total + (pick(heap) ?? 0), 0);
  const kinds = [...new Set(runs.flatMap((run) => run.heap.flatMap((heap) => Object.keys(heap.collections))))].sort();
  const threads = [...new Set(runs.flatMap((run) => run.heap.flatMap((heap) => Object.keys(heap.threads))))].sort();
  const collections = kinds.map((kind) => {
    const count = median(runs.map((run) => per(sum(run, (heap) => heap.collections[kind]?.count))));
    const ms = median(runs.map((run) => per(sum(run, (heap) => heap.collections[kind]?.ms))));
    return `${kind} ${count.toFixed(0)} (${ms.toFixed(0)} ms)`;
  });
  const cpu = threads
    .map((thread) => [thread, median(runs.map((run) => per(sum(run, (heap) => heap.threads[thread]))))])
    .filter(([, seconds]) => seconds >= 0.005)
    .map(([thread, seconds]) => `${thread} ${seconds.toFixed(2)} s`);
  const live = median(runs.map((run) => sum(run, (heap) => heap.live) / 1e6)).toFixed(0);
  return `per 1,000 exports: allocated ${median(runs.map((run) => per(sum(run, (heap) => heap.allocated)) / 1e6)).toFixed(0)} MB (sampled${process.env.BENCH_HEAP_SURVIVORS === '1' ? ': only what outlived a scavenge' : ''}; ${live} MB live at the end); collections ${collections.join(', ')}; CPU by thread ${cpu.join(', ')} (the main thread and all others; profiles in ${HEAP_DIR})`;
}
/** Sampled backend time per 1,000 exports (medians): waiting on heavyweight locks, on lightweight ones, active. */
function waitsLine(runs) {
  const per = (part) => median(runs.map((run) => (1000 * run.waits.seconds[part]) / data.bodies.length));
  const events = {};
  for (const run of runs)
    for (const [event, value] of Object.entries(run.waits.byEvent)) events[event] = (events[event] ?? 0) + (1000 * value) / data.bodies.length / runs.length;
  const top = Object.entries(events)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([event, value]) => `${event} ${(value * 1000).toFixed(1)} ms`)
    .join(', ');
  return `PostgreSQL backends per 1,000 exports (sampled every 20 ms): waiting on row, transaction or other locks ${(per('lock') * 1000).toFixed(0)} ms, on lightweight locks ${(per('lwlock') * 1000).toFixed(0)} ms; a fold (or the read that needs it) waiting for another replica's fold ${(per('foldLock') * 1000).toFixed(0)} ms; active ${per('active').toFixed(2)} s${top === '' ? '' : ` (mean of runs, most: ${top})`}`;
}
console.log(
  `load average at end: ${loadavg()
    .map((value) => value.toFixed(1))
    .join(' ')}`,
);
for (const [name, runs] of Object.entries(results)) {
  runs.forEach((run, index) => {
    if (run.counted === undefined) return;
    checkExact(`${name}, run ${index + 1}: requests in the matrix of those sent`, run.counted, expected);
    checkExact(`${name}, run ${index + 1}: exports refused`, run.failures, 0);
  });
}
