import { MAX_STORED_COUNT } from '../../common/columns.js';
import type { Queryable } from '../connection.js';

/** An increment as it is added to the rollups: its minute, series and both cells. */
export interface Increment {
  minute: number;
  seriesId: number;
  cellId: number;
  allCellId: number;
  value: number;
}

const LEVELS = [
  { table: 'series_minute', owner: 'series_id', bucket: 'minute', minutes: 1, cells: false },
  { table: 'series_hour', owner: 'series_id', bucket: 'hour', minutes: 60, cells: false },
  { table: 'cell_minute', owner: 'cell_id', bucket: 'minute', minutes: 1, cells: true },
  { table: 'cell_hour', owner: 'cell_id', bucket: 'hour', minutes: 60, cells: true },
  { table: 'cell_day', owner: 'cell_id', bucket: 'day', minutes: 1440, cells: true },
] as const;

/**
 * Adds an export's new increments to every rollup level inside its transaction: the SQLite store's fold,
 * done at once, so that what a replica acknowledged is what every replica reads. One upsert per level over
 * the export's buckets, summed here first and in (owner, bucket) order, the order every export locks rows
 * in. Sums saturate at 2^53 − 1, as in SQLite.
 */
export async function addToRollups(db: Queryable, increments: readonly Increment[]): Promise<void> {
  if (increments.length === 0) return;
  for (const level of LEVELS) {
    const sums = new Map<string, { owner: number; bucket: number; count: number }>();
    const add = (owner: number, bucket: number, value: number): void => {
      const key = `${owner}:${bucket}`;
      const entry = sums.get(key);
      if (entry === undefined) sums.set(key, { owner, bucket, count: value });
      else entry.count = Math.min(entry.count + value, MAX_STORED_COUNT);
    };
    for (const increment of increments) {
      const bucket = Math.floor(increment.minute / level.minutes);
      if (level.cells) {
        add(increment.cellId, bucket, increment.value);
        add(increment.allCellId, bucket, increment.value);
      } else add(increment.seriesId, bucket, increment.value);
    }
    const rows = [...sums.values()].sort((a, b) => a.owner - b.owner || a.bucket - b.bucket);
    await db.query(
      `INSERT INTO ${level.table} (${level.owner}, ${level.bucket}, count)
       SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) ORDER BY 1, 2
       ON CONFLICT (${level.owner}, ${level.bucket}) DO UPDATE SET count = LEAST(${level.table}.count + excluded.count, ${MAX_STORED_COUNT})`,
      [rows.map((row) => row.owner), rows.map((row) => row.bucket), rows.map((row) => row.count)],
    );
  }
}
