// The cost the matrix read pays to find requests answered before any server instance existed: the cells do not
// keep the server's declaration, so `cellTotals` also reads the series whose `server_declaration` is `unknown`
// (a scan of the series table, then their rollups). Measured on the store's reader against a database with many
// series, few of them `unknown`, next to the cells read it accompanies.
//
//   npm run build && node test/bench/server-unknown-matrix.mjs
//   env: BENCH_SERIES (200000), BENCH_UNKNOWN (200: series answered without a server), BENCH_RUNS (30)

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteStore } from '../../dist/collector/store/sqlite/index.js';
import { RollupsReader } from '../../dist/collector/store/sqlite/readers/rollups.js';
import { checkExact } from './lib/exactness.mjs';
import { size } from './lib/smoke.mjs';

const SERIES = Number(process.env.BENCH_SERIES ?? size(200_000, 2000));
const UNKNOWN = Number(process.env.BENCH_UNKNOWN ?? size(200, 20));
const RUNS = Number(process.env.BENCH_RUNS ?? size(30, 3));
const MINUTE = Math.floor(Date.now() / 60_000);

const dir = mkdtempSync(join(tmpdir(), 'extscope-bench-unknown-'));
const path = join(dir, 'extscope.db');
try {
  // The schema, as the collector creates it.
  const store = openSqliteStore({
    path,
    clock: Date.now,
    retention: { minuteDays: 7, hourDays: 400, dedupHours: 6 },
    synchronous: 'normal',
    examplesPerCell: 5,
    warn: () => undefined,
  });
  await store.lifecycle.close();

  const db = new Database(path);
  let unknownSeries = 0;
  db.pragma('journal_mode = WAL');
  const instances = 500;
  const insertInstance = db.prepare(
    'INSERT INTO instances (id, key_hash, service, instance_id, first_seen_ms, last_seen_ms) VALUES (?, randomblob(16), ?, ?, 0, 0)',
  );
  const insertCell = db.prepare(
    'INSERT INTO cells (id, key_hash, scope, kind, client_name, client_version, client_declaration) VALUES (?, randomblob(16), 1, 0, ?, ?, ?)',
  );
  const insertSeries =
    db.prepare(`INSERT INTO series (id, key_hash, instance_ref, cell_id, all_cell_id, kind, method, client_name, client_version, client_declaration, server_declaration, outcome)
    VALUES (?, randomblob(16), ?, ?, ?, 0, 'tools/call', ?, '1.0', 'declared', ?, 'complete')`);
  const insertMinute = db.prepare('INSERT INTO series_minute (series_id, minute, count) VALUES (?, ?, ?)');
  const insertCellMinute = db.prepare('INSERT OR IGNORE INTO cell_minute (cell_id, minute, count) VALUES (?, ?, ?)');
  // The hour rollups too, as the fold writes them: a one-hour read over a whole clock hour reads that hour from them.
  const insertHour = db.prepare('INSERT INTO series_hour (series_id, hour, count) VALUES (?, ?, ?)');
  const insertCellHour = db.prepare('INSERT OR IGNORE INTO cell_hour (cell_id, hour, count) VALUES (?, ?, ?)');
  db.transaction(() => {
    for (let i = 1; i <= instances; i++) insertInstance.run(i, `svc-${i % 20}`, `i-${i}`);
    for (let c = 1; c <= 50; c++) insertCell.run(c, `client-${c}`, '1.0', 'declared');
    for (let s = 1; s <= SERIES; s++) {
      const unknown = s % Math.max(1, Math.floor(SERIES / UNKNOWN)) === 0;
      if (unknown) unknownSeries++;
      const cell = (s % 50) + 1;
      insertSeries.run(s, (s % instances) + 1, cell, cell, `client-${cell}`, unknown ? 'unknown' : 'declared');
      insertMinute.run(s, MINUTE - 10, 1);
      insertCellMinute.run(cell, MINUTE - 10, 1);
      insertHour.run(s, Math.floor((MINUTE - 10) / 60), 1);
      insertCellHour.run(cell, Math.floor((MINUTE - 10) / 60), 1);
    }
  })();

  const reader = new RollupsReader(db, () => ({ minuteHorizonMs: Date.now() - 7 * 86_400_000, hourlyAboveMs: 48 * 3_600_000 }));
  const query = { fromMs: Date.now() - 3_600_000, toMs: Date.now() };
  // cellTotals reads in chunks with a turn of the event loop between them: each run is awaited.
  const time = async (run) => {
    const samples = [];
    for (let i = 0; i < RUNS + 5; i++) {
      const started = performance.now();
      await run();
      if (i >= 5) samples.push(performance.now() - started);
    }
    samples.sort((a, b) => a - b);
    return { median: samples[Math.floor(samples.length / 2)], p95: samples[Math.floor(samples.length * 0.95)] };
  };
  const unknownStatement = reader.unknownCells;
  const withUnknown = await time(() => reader.cellTotals(query));
  const params = { d0: 0, d1: 0, h0: 0, h1: 0, h2: 0, h3: 0, m0: MINUTE - 60, m1: MINUTE + 1, m2: 0, m3: 0, service: null, instance: null };
  const unknownOnly = await time(() => unknownStatement.for(params).all(params));
  const totals = await reader.cellTotals(query);
  const unknownRequests = (totals.serverUnknown ?? []).reduce((sum, cell) => sum + cell.count, 0);
  console.log(`${SERIES} series (${unknownRequests} requests in ${UNKNOWN} unknown-server series), ${RUNS} runs each:`);
  console.log(`  cellTotals (cells + unknown-server series): median ${withUnknown.median.toFixed(1)} ms, p95 ${withUnknown.p95.toFixed(1)} ms`);
  console.log(`  of which the unknown-server series read:    median ${unknownOnly.median.toFixed(1)} ms, p95 ${unknownOnly.p95.toFixed(1)} ms`);
  db.close();
  // One request in each unknown-server series, all inside the queried hour.
  checkExact('requests read from unknown-server series of those written', unknownRequests, unknownSeries);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
