// Ingest throughput on PostgreSQL: counter points per second through POST /v1/metrics (protobuf, one export per
// instance and minute, as the agent sends them, many instances at once) into one collector replica and into
// three replicas on one database (senders spread requests over them round-robin, as a load balancer would),
// side by side in one run with one collector on SQLite and with a raw `pg` loop writing the same rows (one
// transaction per export: the dedup keys, then the five rollup levels as set-based upserts, ids precomputed).
//
//   npm run build && node test/bench/postgres-ingest.mjs
//   env: BENCH_PG (maintenance database URL, default postgres://root@127.0.0.1:5432/test), BENCH_INSTANCES (200),
//   BENCH_ROUNDS (6), BENCH_CONCURRENCY (8), BENCH_TEMPORALITY (delta | cumulative)

import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { MetricsRequest } from '../../dist/collector/otlp/proto-root.js';
import { startCollectorChild } from './lib/collector-child.mjs';
import { fleet, rng } from './lib/fleet.mjs';
import { createBenchDatabase, pg } from './lib/postgres-db.mjs';

const INSTANCES = Number(process.env.BENCH_INSTANCES ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const CUMULATIVE = (process.env.BENCH_TEMPORALITY ?? 'delta') === 'cumulative';
const processStartNs = BigInt(Date.now() - (ROUNDS + 3) * 60_000) * 1_000_000n;

const kv = (key, value) => ({ key, value: typeof value === 'boolean' ? { boolValue: value } : { stringValue: value } });

/** Every export of every round: its protobuf body, and the rows a raw loop writes for it. */
function build() {
  const { instances } = fleet({ services: Math.max(1, Math.round(INSTANCES / 25)), perService: Math.min(25, INSTANCES) });
  const random = rng(7);
  const ids = new Map();
  const id = (key) => {
    let value = ids.get(key);
    if (value === undefined) ids.set(key, (value = ids.size + 1));
    return value;
  };
  const totals = new Map();
  const rounds = [];
  let requests = 0;
  for (let round = 0; round <= ROUNDS; round++) {
    const exports = [];
    let points = 0;
    const endMs = Date.now() - (ROUNDS + 1 - round) * 60_000;
    const timeNs = BigInt(endMs) * 1_000_000n;
    const startNs = CUMULATIVE ? processStartNs : timeNs - 60_000_000_000n;
    const minute = Math.floor(endMs / 60_000);
    for (const instance of instances) {
      const requestPoints = [];
      const extensionPoints = [];
      const rows = [];
      const add = (list, attributes, count, cell) => {
        const key = `${instance.instanceId}|${JSON.stringify(attributes)}`;
        const total = (totals.get(key) ?? 0) + count;
        totals.set(key, total);
        list.push({ attributes, startTimeUnixNano: String(startNs), timeUnixNano: String(timeNs), asInt: String(CUMULATIVE ? total : count) });
        rows.push({ stream: id(key), cell: id(`${instance.service}|${cell}`), allCell: id(`*|${cell}`), minute, value: count, endNs: timeNs, startNs });
      };
      for (const client of instance.clients) {
        // Round 0 (the warm-up) reports every stream once, so that it creates them all.
        if (round > 0 && random() < 0.4) continue;
        const base = [
          kv('extscope.server.name', instance.serverName),
          kv('extscope.server.version', '2.3.1'),
          kv('mcp.method.name', 'tools/call'),
          kv('extscope.era', 'modern'),
          kv('mcp.protocol.version', '2026-07-28'),
          kv('extscope.client.name', client.name),
          kv('extscope.client.version', client.version),
          kv('extscope.client.declaration', 'declared'),
          kv('extscope.server.declaration', 'declared'),
          kv('extscope.outcome', 'complete'),
        ];
        const calls = 1 + Math.floor(random() * 40);
        requests += calls;
        const who = `${client.name}|${client.version}`;
        add(requestPoints, base, calls, `${who}|declared`);
        for (const extensionId of new Set([...client.declared, ...instance.advertised])) {
          const clientDeclared = client.declared.includes(extensionId);
          const serverDeclared = instance.advertised.includes(extensionId);
          const attributes = [
            ...base,
            kv('extscope.extension.id', extensionId),
            kv('extscope.extension.client_declared', clientDeclared),
            kv('extscope.extension.server_declared', serverDeclared),
            kv('extscope.extension.negotiated', clientDeclared && serverDeclared),
            kv('extscope.extension.required', false),
          ];
          add(extensionPoints, attributes, calls, `${who}|${extensionId}|${clientDeclared}|${serverDeclared}`);
        }
      }
      points += rows.length;
      const temporality = CUMULATIVE ? 2 : 1;
      const body = MetricsRequest.encode(
        MetricsRequest.fromObject({
          resourceMetrics: [
            {
              resource: { attributes: [kv('service.name', instance.service), kv('service.instance.id', instance.instanceId), kv('host.name', instance.host), kv('extscope.server.name', instance.serverName), kv('extscope.server.version', '2.3.1')] },
              scopeMetrics: [
                {
                  scope: { name: 'extscope', version: '0.1.0' },
                  metrics: [
                    { name: 'extscope.requests', unit: '{request}', sum: { aggregationTemporality: temporality, isMonotonic: true, dataPoints: requestPoints } },
                    { name: 'extscope.extension.requests', unit: '{request}', sum: { aggregationTemporality: temporality, isMonotonic: true, dataPoints: extensionPoints } },
                  ],
                },
              ],
            },
          ],
        }),
      ).finish();
      exports.push({ body: Buffer.from(body), rows });
    }
    rounds.push({ exports, points });
  }
  return { warmup: rounds[0], steady: rounds.slice(1), requests, streams: ids.size };
}

function post(agent, url, body) {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/metrics`, { method: 'POST', agent, headers: { 'content-type': 'application/x-protobuf', 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends every export (retrying a 503, as an exporter would), spread round-robin over `urls`. */
async function sendAll(agent, urls, exports) {
  let next = 0;
  let retries = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < exports.length) {
        const index = next++;
        for (let attempt = 0; ; attempt++) {
          const status = await post(agent, urls[(index + attempt) % urls.length], exports[index].body);
          if (status === 200) break;
          if (status !== 503 || attempt > 20) throw new Error(`export ${index}: HTTP ${status}`);
          retries++;
        }
      }
    }),
  );
  return retries;
}

async function throughCollectors(data, db, replicas) {
  const children = await Promise.all(Array.from({ length: replicas }, () => startCollectorChild(db, { env: { EXTSCOPE_MAX_IN_FLIGHT: '64' } })));
  const urls = children.map((child) => child.url);
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const visible = async () => (await (await fetch(`${urls[0]}/api/v1/matrix?from=-1d`)).json()).rows.reduce((sum, row) => sum + row.requests, 0);
  try {
    let started = performance.now();
    let retries = await sendAll(agent, urls, data.warmup.exports);
    await visible();
    const warmupSeconds = (performance.now() - started) / 1000;
    started = performance.now();
    for (const round of data.steady) retries += await sendAll(agent, urls, round.exports);
    const counted = await visible();
    return { warmupSeconds, seconds: (performance.now() - started) / 1000, counted, retries };
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

/** The same rows, written by hand: one transaction per export on CONCURRENCY connections, as the collectors get. */
async function rawLoop(data, url) {
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
          rows.map((row) => String(row.endNs)),
          rows.map((row) => row.stream),
          rows.map((row) => String(row.startNs)),
        ]);
        for (const [table, minutes, cells] of levels) {
          const sums = new Map();
          const add = (owner, bucket, value) => sums.set(`${owner}:${bucket}`, [owner, bucket, (sums.get(`${owner}:${bucket}`)?.[2] ?? 0) + value]);
          for (const row of rows) {
            const bucket = Math.floor(row.minute / minutes);
            if (cells) {
              add(row.cell, bucket, row.value);
              add(row.allCell, bucket, row.value);
            } else add(row.stream, bucket, row.value);
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
    const run = async (exports) => {
      let next = 0;
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (next < exports.length) await apply(exports[next++].rows);
      }));
    };
    await run(data.warmup.exports);
    const started = performance.now();
    for (const round of data.steady) await run(round.exports);
    return { seconds: (performance.now() - started) / 1000 };
  } finally {
    await pool.end();
  }
}

const data = build();
const points = data.steady.reduce((sum, round) => sum + round.points, 0);
const exportsCount = data.steady.reduce((sum, round) => sum + round.exports.length, 0);
console.log(
  `postgres ingest: ${INSTANCES} instances, ${data.streams} streams; warm-up round (creates every stream: ${data.warmup.points} points) + ${ROUNDS} one-minute rounds = ` +
    `${exportsCount} exports, ${points} counter points; ${CONCURRENCY} concurrent senders; ${CUMULATIVE ? 'cumulative' : 'delta'}`,
);
console.log(`load average at start: ${loadavg().map((value) => value.toFixed(1)).join(' ')} (2 vCPU, shared with other engineers' test runs)`);
const rate = (seconds) => Math.round(points / seconds);
// The raw loop first, so that every line can be printed (with its ratio) as soon as it is measured.
let raw;
let sqlite;
const report = (name, result) => {
  const exact = result.counted === undefined ? '' : `; warm-up ${Math.round(data.warmup.points / result.warmupSeconds)} points/s; 503 retries ${result.retries}; ${result.counted === data.requests ? 'exact' : `MISMATCH (${result.counted} of ${data.requests})`}`;
  const ofSqlite = sqlite === undefined ? '' : `  ${((100 * sqlite) / result.seconds).toFixed(0).padStart(4)} % of SQLite`;
  console.log(`${name.padEnd(26)} ${result.seconds.toFixed(2).padStart(6)} s  ${String(rate(result.seconds)).padStart(7)} points/s  ${((100 * raw) / result.seconds).toFixed(0).padStart(4)} % of raw pg${ofSqlite}${exact}`);
};
const dir = mkdtempSync(join(tmpdir(), 'extscope-bench-pgingest-'));
try {
  const rawDatabase = await createBenchDatabase('raw');
  try {
    const result = await rawLoop(data, rawDatabase.url);
    raw = result.seconds;
    report('raw pg loop (same rows)', result);
  } finally {
    await rawDatabase.drop();
  }
  const onSqlite = await throughCollectors(data, join(dir, 'bench.db'), 1);
  sqlite = onSqlite.seconds;
  report('SQLite, 1 collector', onSqlite);
  for (const replicas of [1, 3]) {
    const database = await createBenchDatabase(`ingest${replicas}`);
    try {
      report(`PostgreSQL, ${replicas} replica${replicas > 1 ? 's' : ''}`, await throughCollectors(data, database.url, replicas));
    } finally {
      await database.drop();
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`load average at end: ${loadavg().map((value) => value.toFixed(1)).join(' ')}`);
