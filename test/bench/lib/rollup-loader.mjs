// Days of minute rollups for a synthetic fleet, loaded through the store's own write path below HTTP: increments
// are written to `point_log` as an export would, and folded into the rollups by the store's own Folder (foldStep, as
// the store calls it, a day at a time). Shared by the benchmarks that query a large database.
import Database from 'better-sqlite3';
import { DEFAULT_RETENTION } from '../../../dist/collector/store/store.js';
import { openSqliteStore } from '../../../dist/collector/store/sqlite/index.js';
import { Folder } from '../../../dist/collector/store/sqlite/rollup.js';
import { CellScope, cellKey, identityHash, instanceCellKey, instanceKey, seriesKey } from '../../../dist/collector/store/common/identity.js';
import { INSTANCE_CELL_TABLE_COLUMNS } from '../../../dist/collector/store/common/columns.js';
import { instanceCellValues } from '../../../dist/collector/store/common/ingest-plan.js';
import { rng } from './fleet.mjs';

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

/**
 * `instances`: `{ service, instanceId, host, serverName, advertised: string[], clients: { name, version, declared: string[] }[] }`.
 * Each instance reports one of its clients every `stride` minutes (rotating), `1 + random·20` calls; with
 * `errorRate`, that share of reports also carries one `tool_error` answer. Returns the points and requests written.
 */
export async function loadRollups(dbPath, { instances, days = 7, stride, seed, errorRate = 0 }) {
  await openSqliteStore({ path: dbPath, clock: Date.now, retention: DEFAULT_RETENTION, synchronous: 'normal', examplesPerCell: 5 }).lifecycle.close();
  const db = new Database(dbPath);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  const now = Date.now();
  const firstMinute = Math.floor((now - days * 86_400_000) / 60_000) + 60;
  const lastMinute = Math.floor(now / 60_000) - 1;
  const insertInstance = db.prepare(
    'INSERT INTO instances (key_hash, service, instance_id, service_version, host, server_name, server_version, first_seen_ms, last_seen_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const insertCell = db.prepare(
    'INSERT OR IGNORE INTO cells (key_hash, scope, kind, service, client_name, client_version, client_declaration, extension_id, client_declared, server_declared, negotiated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const selectCell = db.prepare('SELECT id FROM cells WHERE key_hash = ?').pluck();
  const insertSeries = db.prepare(
    `INSERT INTO series (key_hash, instance_ref, cell_id, all_cell_id, instance_cell_id, kind, server_name, server_version, method, era, protocol_version, client_name, client_version, client_declaration, server_declaration, outcome, status_code, extension_id, client_declared, server_declared, negotiated, required) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  // The instance cell of each series (the store's own key and values: common/identity.ts, ingest-plan.ts).
  const insertInstanceCell = db.prepare(
    `INSERT INTO instance_cells (instance_ref, kind, ${INSTANCE_CELL_TABLE_COLUMNS.map((column) => column.column).join(', ')}) VALUES (?, ?, ${INSTANCE_CELL_TABLE_COLUMNS.map(() => '?').join(', ')})`,
  );
  const instanceCells = new Map();
  const instanceCellFor = (ref, dims) => {
    const key = instanceCellKey(ref, dims);
    let id = instanceCells.get(key);
    if (id === undefined) instanceCells.set(key, (id = Number(insertInstanceCell.run(ref, dims.kind, ...instanceCellValues(dims)).lastInsertRowid)));
    return id;
  };
  const flag = (value) => (value === null ? null : value ? 1 : 0);
  const outcomes = errorRate > 0 ? [['complete'], ['tool_error']] : [['complete']];
  // Per instance, per client: the series its traffic lands in (request outcomes + one per extension id).
  const plan = db.transaction(() =>
    instances.map((instance) => {
      const resource = { service: instance.service, instanceId: instance.instanceId };
      const ref = Number(
        insertInstance.run(
          identityHash(instanceKey(resource)),
          instance.service,
          instance.instanceId,
          '2.3.1',
          instance.host,
          instance.serverName,
          '2.3.1',
          now - days * 86_400_000,
          now,
        ).lastInsertRowid,
      );
      return instance.clients.map((client) => {
        const series = [];
        const extensions = [...new Set([...client.declared, ...instance.advertised])].map((id) => ({
          id,
          clientDeclared: client.declared.includes(id),
          serverDeclared: instance.advertised.includes(id),
        }));
        for (const [outcome, extension] of [...outcomes, ...extensions.map((e) => ['complete', e])]) {
          const dims = seriesDims(client, outcome, extension);
          const cellFor = (scope) => {
            const cellHash = identityHash(cellKey(scope, instance.service, dims));
            const service = scope === CellScope.Service ? instance.service : null;
            insertCell.run(
              cellHash,
              scope,
              dims.kind,
              service,
              client.name,
              client.version,
              dims.kind === 0 ? 'declared' : null,
              dims.extensionId,
              flag(dims.clientDeclared),
              flag(dims.serverDeclared),
              flag(dims.negotiated),
            );
            return selectCell.get(cellHash);
          };
          const cell = cellFor(CellScope.Service);
          const allCell = cellFor(CellScope.AllServices);
          const id = Number(
            insertSeries.run(
              identityHash(seriesKey(ref, dims)),
              ref,
              cell,
              allCell,
              instanceCellFor(ref, dims),
              dims.kind,
              instance.serverName,
              '2.3.1',
              dims.method,
              dims.era,
              dims.protocolVersion,
              client.name,
              client.version,
              'declared',
              'declared',
              outcome,
              null,
              dims.extensionId,
              flag(dims.clientDeclared),
              flag(dims.serverDeclared),
              flag(dims.negotiated),
              flag(dims.required),
            ).lastInsertRowid,
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
  const insertChunk = db.prepare(
    `INSERT INTO point_log (end_ns, stream_id, start_ns, minute, series_id, cell_id, all_cell_id, value) VALUES ${Array.from({ length: CHUNK }, () => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
  );
  const insertOne = db.prepare(
    'INSERT INTO point_log (end_ns, stream_id, start_ns, minute, series_id, cell_id, all_cell_id, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const clearLog = db.prepare('DELETE FROM point_log');
  const random = rng(seed);
  let points = 0;
  let requests = 0;
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
          if ((minute + index) % stride !== 0) continue;
          const perClient = plan[index];
          const series = perClient[Math.floor(minute / stride + index) % perClient.length];
          const calls = 1 + Math.floor(random() * 20);
          const errors = errorRate > 0 && random() < errorRate ? 1 : 0;
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
    // The store folds in bounded steps (so that a long fold yields to other work); here, all of it at once.
    const target = folder.newest();
    for (let done = false; !done;) {
      const step = folder.foldStep(target, 1_000_000);
      // A quarantined row is an increment the rollups do not hold: the data set would not be what it says.
      if (step.quarantined > 0) throw new Error(`the fold quarantined ${step.quarantined} logged rows`);
      done = step.done;
    }
    clearLog.run();
  }
  const counts = Object.fromEntries(
    [
      'series',
      'cells',
      'instance_cells',
      'series_minute',
      'series_hour',
      'cell_minute',
      'cell_hour',
      'cell_day',
      'instance_cell_hour',
      'instance_cell_day',
    ].map((table) => [table, db.prepare(`SELECT count(*) FROM ${table}`).pluck().get()]),
  );
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.pragma('optimize');
  db.close();
  return { points, requests, counts, instances: instances.length };
}
