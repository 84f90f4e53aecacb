import Database from 'better-sqlite3';
import { MINUTES_PER_DAY, MINUTES_PER_HOUR, MS_PER_MINUTE } from '../../collector/model/time.js';

/**
 * Writes `clients` × `ids` extension cells of the all-services scope, each with one count in the current minute
 * (and its hour and day),
 * straight into the tables a fold fills: the worst case the dimension caps allow for one instance's hour (client
 * names × the hourly id limit) would take minutes to ingest point by point.
 */
export function fillCells(dbPath: string, clients: number, ids: number, nowMs: number): number {
  const db = new Database(dbPath);
  try {
    const minute = Math.floor(nowMs / MS_PER_MINUTE);
    db.transaction(() => {
      db.prepare(
        `
        WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < @total - 1)
        INSERT INTO cells (key_hash, scope, kind, service, client_name, client_version, client_declaration, extension_id, client_declared, server_declared, negotiated)
        SELECT randomblob(16), 1, 1, NULL, 'client-' || (i / CAST(@ids AS INTEGER)), '1.0', NULL, 'com.example/ext-' || (i % CAST(@ids AS INTEGER)), 1, 0, 0 FROM n`,
      ).run({ total: clients * ids, ids });
      // Every level, as a fold leaves them: a read that happens to span a whole hour (or day) reads the coarser one.
      db.prepare('INSERT INTO cell_minute (cell_id, minute, count) SELECT id, ?, 1 FROM cells WHERE scope = 1').run(minute);
      db.prepare('INSERT INTO cell_hour (cell_id, hour, count) SELECT id, ?, 1 FROM cells WHERE scope = 1').run(Math.floor(minute / MINUTES_PER_HOUR));
      db.prepare('INSERT INTO cell_day (cell_id, day, count) SELECT id, ?, 1 FROM cells WHERE scope = 1').run(Math.floor(minute / MINUTES_PER_DAY));
    })();
    return clients * ids;
  } finally {
    db.close();
  }
}

/** One extension cell per client name, the ids spread over them: `clients` rows and `ids` columns, sparse. */
export function fillSparse(dbPath: string, clients: number, ids: number, nowMs: number): void {
  const db = new Database(dbPath);
  try {
    const minute = Math.floor(nowMs / MS_PER_MINUTE);
    db.transaction(() => {
      db.prepare(
        `
        WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < @total - 1)
        INSERT INTO cells (key_hash, scope, kind, service, client_name, client_version, client_declaration, extension_id, client_declared, server_declared, negotiated)
        SELECT randomblob(16), 1, 1, NULL, 'client-' || i, '1.0', NULL, 'com.example/ext-' || (i % @ids), 1, 0, 0 FROM n`,
      ).run({ total: clients, ids });
      db.prepare('INSERT INTO cell_minute (cell_id, minute, count) SELECT id, ?, 1 FROM cells WHERE scope = 1').run(minute);
      db.prepare('INSERT INTO cell_hour (cell_id, hour, count) SELECT id, ?, 1 FROM cells WHERE scope = 1').run(Math.floor(minute / MINUTES_PER_HOUR));
      db.prepare('INSERT INTO cell_day (cell_id, day, count) SELECT id, ?, 1 FROM cells WHERE scope = 1').run(Math.floor(minute / MINUTES_PER_DAY));
    })();
  } finally {
    db.close();
  }
}
