import type Database from 'better-sqlite3';

/** Columns of a `point_log` row, in insert order: end, stream, start, minute, series, cell, all-services cell, increment. */
export const LOG_COLUMNS = 8;
/** Rows per multi-row insert (8 parameters each, well under SQLite's variable limit). */
const LOG_CHUNK = 256;

/**
 * Appends increments to `point_log`, where the fold picks them up. The identity of a point (end, stream,
 * start) is unique there, so a delta point already logged (a retry) is ignored: applied once, ever.
 */
export class PointLog {
  /** Multi-row `INSERT OR IGNORE INTO point_log`, by row count (1..LOG_CHUNK). */
  private readonly inserts = new Map<number, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  /** Inserts rows of {@link LOG_COLUMNS} values each; returns how many were new, and hands each new row's series and increment to `added`. */
  insert(rows: readonly (bigint | number)[], added: (seriesId: number, value: number) => void): number {
    let inserted = 0;
    for (let offset = 0; offset < rows.length; offset += LOG_CHUNK * LOG_COLUMNS) {
      const chunk = rows.slice(offset, offset + LOG_CHUNK * LOG_COLUMNS);
      const count = chunk.length / LOG_COLUMNS;
      let statement = this.inserts.get(count);
      if (statement === undefined) {
        const values = Array.from({ length: count }, () => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
        // RETURNING yields only the rows inserted: an ignored duplicate returns nothing.
        statement = this.db.prepare(`INSERT OR IGNORE INTO point_log (end_ns, stream_id, start_ns, minute, series_id, cell_id, all_cell_id, value) VALUES ${values} RETURNING series_id, value`).raw(true);
        this.inserts.set(count, statement);
      }
      for (const [seriesId, value] of statement.all(chunk) as [number, number][]) {
        added(seriesId, value);
        inserted++;
      }
    }
    return inserted;
  }
}
