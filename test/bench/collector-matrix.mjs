// Query latency: GET /api/v1/matrix over 7 days of minute rollups for 500 instances × 50 client versions ×
// 20 extensions, through a real collector (child process) over HTTP: median and p95, next to other queries.
//
//   npm run build && node test/bench/collector-matrix.mjs
//   env: BENCH_STRIDE (5: each instance reports one of its client versions every 5 minutes), BENCH_RUNS (50),
//   BENCH_CLIENTS_PER_SERVICE (10 of the 50 client versions use each service; 50 = every cell populated)
//
// The seven days are loaded through the store's own write path below the HTTP layer: increments are written to
// `point_log` as an export would, and folded into the rollups by the collector's Folder (a day at a time).

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DEFAULT_RETENTION } from '../../dist/collector/config.js';
import { SqliteStore } from '../../dist/collector/store/sqlite/index.js';
import { Folder } from '../../dist/collector/store/sqlite/rollup.js';
import { CellScope, cellKey, identityHash, instanceKey, seriesKey } from '../../dist/collector/store/sqlite/writer/identity.js';
import { fleet, rng } from './fleet.mjs';
import { startCollectorChild } from './collector-child.mjs';

const STRIDE = Number(process.env.BENCH_STRIDE ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 50);
const CLIENTS_PER_SERVICE = Number(process.env.BENCH_CLIENTS_PER_SERVICE ?? 10);
const DAYS = 7;

function seriesDims(client, outcome, extension) {
  return {
    kind: extension === undefined ? 0 : 1,
    serverName: null,
    serverVersion: '2.3.1',
    method: 'tools/call',
    era: 'modern',
    protocolVersion: '2026-07-28',
    clientName: client.name,
    clientVersion: client.version,
    clientDeclaration: 'declared',
    serverDeclaration: 'declared',
    outcome,
    statusCode: null,
    extensionId: extension?.id ?? null,
    clientDeclared: extension?.clientDeclared ?? null,
    serverDeclared: extension?.serverDeclared ?? null,
    negotiated: extension === undefined ? null : extension.clientDeclared && extension.serverDeclared,
    required: extension === undefined ? null : false,
  };
}

async function load(dbPath) {
  await new SqliteStore({ path: dbPath, clock: Date.now, retention: DEFAULT_RETENTION, synchronous: 'normal', examplesPerCell: 5 }).close();
  const db = new Database(dbPath);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  const { instances, clients } = fleet({ clientsPerService: CLIENTS_PER_SERVICE });
  const now = Date.now();
  const firstMinute = Math.floor((now - DAYS * 86_400_000) / 60_000) + 60;
  const lastMinute = Math.floor(now / 60_000) - 1;
  const insertInstance = db.prepare('INSERT INTO instances (key_hash, service, instance_id, service_version, host, server_name, server_version, first_seen_ms, last_seen_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const insertCell = db.prepare('INSERT OR IGNORE INTO cells (key_hash, scope, kind, service, client_name, client_version, client_declaration, extension_id, client_declared, server_declared, negotiated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const selectCell = db.prepare('SELECT id FROM cells WHERE key_hash = ?').pluck();
  const insertSeries = db.prepare(`INSERT INTO series (key_hash, instance_ref, cell_id, all_cell_id, kind, server_name, server_version, method, era, protocol_version, client_name, client_version, client_declaration, server_declaration, outcome, status_code, extension_id, client_declared, server_declared, negotiated, required) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const flag = (value) => (value === null ? null : value ? 1 : 0);
  // Per instance, per client version: the series its traffic lands in (2 request outcomes + one per extension id).
  const plan = db.transaction(() =>
    instances.map((instance) => {
      const resource = { service: instance.service, instanceId: instance.instanceId };
      const ref = Number(insertInstance.run(identityHash(instanceKey(resource)), instance.service, instance.instanceId, '2.3.1', instance.host, instance.serverName, '2.3.1', now - DAYS * 86_400_000, now).lastInsertRowid);
      return instance.clients.map((client) => {
        const series = [];
        const extensions = [...new Set([...client.declared, ...instance.advertised])].map((id) => ({ id, clientDeclared: client.declared.includes(id), serverDeclared: instance.advertised.includes(id) }));
        for (const [outcome, extension] of [['complete'], ['tool_error'], ...extensions.map((e) => ['complete', e])]) {
          const dims = seriesDims(client, outcome, extension);
          const cellFor = (scope) => {
            const cellHash = identityHash(cellKey(scope, instance.service, dims));
            const service = scope === CellScope.Service ? instance.service : null;
            insertCell.run(cellHash, scope, dims.kind, service, client.name, client.version, dims.kind === 0 ? 'declared' : null, dims.extensionId, flag(dims.clientDeclared), flag(dims.serverDeclared), flag(dims.negotiated));
            return selectCell.get(cellHash);
          };
          const cell = cellFor(CellScope.Service);
          const allCell = cellFor(CellScope.AllServices);
          const id = Number(
            insertSeries.run(identityHash(seriesKey(ref, dims)), ref, cell, allCell, dims.kind, instance.serverName, '2.3.1', dims.method, dims.era, dims.protocolVersion, client.name, client.version, 'declared', 'declared', outcome, null, dims.extensionId, flag(dims.clientDeclared), flag(dims.serverDeclared), flag(dims.negotiated), flag(dims.required)).lastInsertRowid,
          );
          series.push({ id, cell, allCell, value: (calls, errors) => (extension !== undefined ? calls + errors : outcome === 'tool_error' ? errors : calls) });
        }
        return series;
      });
    }),
  )();

  const folder = new Folder(db);
  const CHUNK = 128;
  const COLUMNS = 8;
  const insertChunk = db.prepare(`INSERT INTO point_log (end_ns, stream_id, start_ns, minute, series_id, cell_id, all_cell_id, value) VALUES ${Array.from({ length: CHUNK }, () => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`);
  const insertOne = db.prepare('INSERT INTO point_log (end_ns, stream_id, start_ns, minute, series_id, cell_id, all_cell_id, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const random = rng(1);
  let points = 0;
  let requests = 0;
  const clearLog = db.prepare('DELETE FROM point_log');
  for (let dayStart = firstMinute; dayStart <= lastMinute; dayStart += 1440) {
    const buffer = [];
    const flush = () => {
      while (buffer.length >= CHUNK * COLUMNS) insertChunk.run(buffer.splice(0, CHUNK * COLUMNS));
      while (buffer.length > 0) insertOne.run(buffer.splice(0, COLUMNS));
    };
    db.transaction(() => {
      for (let minute = dayStart; minute < Math.min(dayStart + 1440, lastMinute + 1); minute++) {
        const endNs = BigInt(minute) * 60_000_000_000n + 30_000_000_000n;
        for (let index = 0; index < instances.length; index++) {
          if ((minute + index) % STRIDE !== 0) continue;
          const series = plan[index][Math.floor(minute / STRIDE + index) % CLIENTS_PER_SERVICE];
          const calls = 1 + Math.floor(random() * 20);
          const errors = random() < 0.3 ? 1 : 0;
          requests += calls + errors;
          for (const { id, cell, allCell, value: valueOf } of series) {
            const value = valueOf(calls, errors);
            if (value === 0) continue;
            buffer.push(endNs, id, endNs - 60_000_000_000n, minute, id, cell, allCell, value);
            points++;
            if (buffer.length >= CHUNK * COLUMNS * 64) flush();
          }
        }
      }
      flush();
    })();
    folder.fold();
    clearLog.run();
  }
  const counts = Object.fromEntries(['series', 'cells', 'series_minute', 'series_hour', 'cell_minute', 'cell_hour', 'cell_day'].map((table) => [table, db.prepare(`SELECT count(*) FROM ${table}`).pluck().get()]));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.pragma('optimize');
  db.close();
  return { points, requests, counts, clients: clients.length, instances: instances.length };
}


function get(agent, url) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    request(url, { agent }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ ms: performance.now() - started, status: res.statusCode, body: Buffer.concat(chunks) }));
    })
      .on('error', reject)
      .end();
  });
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

const dir = mkdtempSync(join(tmpdir(), 'extscope-bench-matrix-'));
const dbPath = join(dir, 'matrix.db');
try {
  let started = performance.now();
  const loaded = await load(dbPath);
  const size = statSync(dbPath).size;
  console.log(
    `matrix: ${loaded.instances} instances (20 services × 25), ${loaded.clients} client versions, 20 extension ids, ${DAYS} days; ` +
      `${CLIENTS_PER_SERVICE} client versions per service, each instance reports one of them every ${STRIDE} minutes → ${loaded.points.toLocaleString('en')} points, ${loaded.requests.toLocaleString('en')} requests`,
  );
  console.log(`        rows: ${Object.entries(loaded.counts).map(([table, count]) => `${table} ${count.toLocaleString('en')}`).join(', ')}; database ${(size / 1e6).toFixed(0)} MB; loaded in ${((performance.now() - started) / 1000).toFixed(0)} s`);

  const { child, url } = await startCollectorChild(dbPath);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    // Let the start-up retention pass finish (it walks every series once).
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const instance = fleet({ clientsPerService: CLIENTS_PER_SERVICE }).instances[7].instanceId;
    const queries = [
      ['matrix 7 d, by client (the target)', '/api/v1/matrix?from=-7d'],
      ['matrix 7 d, by client@version', '/api/v1/matrix?from=-7d&group=client_version'],
      ['matrix 7 d, one service', '/api/v1/matrix?from=-7d&service=service-3'],
      ['matrix 7 d, one instance', `/api/v1/matrix?from=-7d&instance=${instance}`],
      ['matrix 24 h (minute resolution)', '/api/v1/matrix?from=-24h&group=client_version'],
      ['matrix 1 h', '/api/v1/matrix?from=-1h'],
      ['matrix 7 d as CSV', '/api/v1/matrix?from=-7d&group=client_version&format=csv'],
      ['timeseries 7 d, 1 h step', '/api/v1/timeseries?extension=io.modelcontextprotocol/tasks&from=-7d&step=1h'],
      ['instances', '/api/v1/instances'],
    ];
    let check;
    for (const [name, path] of queries) {
      for (let i = 0; i < 5; i++) await get(agent, `${url}${path}`);
      const times = [];
      let last;
      for (let i = 0; i < RUNS; i++) {
        last = await get(agent, `${url}${path}`);
        if (last.status !== 200) throw new Error(`${path}: HTTP ${last.status} ${last.body}`);
        times.push(last.ms);
      }
      times.sort((a, b) => a - b);
      console.log(`${name.padEnd(38)} median ${percentile(times, 50).toFixed(1).padStart(6)} ms   p95 ${percentile(times, 95).toFixed(1).padStart(6)} ms   (${(last.body.length / 1024).toFixed(0)} KiB)`);
      if (check === undefined) check = JSON.parse(last.body.toString());
    }
    const total = check.rows.reduce((sum, row) => sum + row.requests, 0);
    console.log(`exactness: requests loaded ${loaded.requests.toLocaleString('en')}, in the 7-day matrix ${total.toLocaleString('en')}: ${total === loaded.requests ? 'exact' : 'MISMATCH'}`);
  } finally {
    agent.destroy();
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
