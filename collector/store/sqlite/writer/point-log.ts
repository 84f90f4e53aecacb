import type Database from 'better-sqlite3';
import type { LogRow } from '../../common/ingest-plan.js';

/** Columns of a `point_log` row, in insert order: end, stream, start, minute, series, cell, all-services cell, increment. */
const LOG_COLUMNS = 8;
/** Rows per multi-row insert (8 parameters each, well under SQLite's variable limit). */
const LOG_CHUNK = 256;

/**
 * Appends increments to `point_log`, where the fold picks them up. The identity of a point (end, stream,
 * start) is unique there, so a delta point already logged (a retry) is ignored: applied once, ever.
 */
export class PointLog {
  /** Multi-row `INSERT OR IGNORE INTO point_log`, by row count (1..LOG_CHUNK). */
  private readonly inserts = new Map<number, Database.Statement>();
  private readonly insertedRange: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.insertedRange = db.prepare('SELECT series_id, value FROM point_log WHERE rowid BETWEEN ? AND ?').raw(true);
  }

  /** Inserts the rows; returns how many were new, and hands each new row's series and increment to `added`. */
  insert(logRows: readonly LogRow[], added: (seriesId: number, value: number) => void): number {
    let inserted = 0;
    for (let offset = 0; offset < logRows.length; offset += LOG_CHUNK) {
      const count = Math.min(LOG_CHUNK, logRows.length - offset);
      // Each chunk's parameters straight from the rows, in one array of its final length.
      const chunk = new Array<bigint | number>(count * LOG_COLUMNS);
      for (let index = 0, at = 0; index < count; index++) {
        const row = logRows[offset + index] as LogRow;
        chunk[at++] = row.endNs;
        chunk[at++] = row.streamId;
        chunk[at++] = row.startNs;
        chunk[at++] = row.minute;
        chunk[at++] = row.seriesId;
        chunk[at++] = row.cellId;
        chunk[at++] = row.allCellId;
        chunk[at++] = row.value;
      }
      let statement = this.inserts.get(count);
      if (statement === undefined) {
        const values = Array.from({ length: count }, () => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', ');
        statement = this.db.prepare(
          `INSERT OR IGNORE INTO point_log (end_ns, stream_id, start_ns, minute, series_id, cell_id, all_cell_id, value) VALUES ${values}`,
        );
        this.inserts.set(count, statement);
      }
      // Not RETURNING: applying three exports of 20,000 new points, it made the longest turn of the event loop
      // 220-390 ms against 140-190 ms without (same machine, runs alternated).
      const { changes, lastInsertRowid } = statement.run(chunk);
      if (changes === count) {
        for (let index = 0; index < count; index++) {
          const row = logRows[offset + index] as LogRow;
          added(row.seriesId, row.value);
        }
      } else if (changes > 0) {
        // Some were a retry's: the new ones are the last rows inserted. New rows of a rowid table take the rowids
        // after the largest one, in order, and nothing else writes the log inside this transaction.
        const last = Number(lastInsertRowid);
        for (const [seriesId, value] of this.insertedRange.all(last - changes + 1, last) as [number, number][]) added(seriesId, value);
      }
      inserted += changes;
    }
    return inserted;
  }
}
