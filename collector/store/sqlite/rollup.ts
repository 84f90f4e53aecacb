import type Database from 'better-sqlite3';
import { MAX_COUNT_PER_STREAM_MINUTE } from '../../model/records.js';
import { MAX_STORED_COUNT } from '../common/columns.js';
import { recordFold } from '../common/closed-buckets.js';
import { ROLLUP_LEVELS, type RollupLevel, bucketOf } from '../common/rollup-levels.js';
import { safeSum } from './sql.js';

/** A `point_log` row the fold can add: a whole number within the per-stream bound (what ingest lets in). */
const FOLDABLE = `typeof(value) = 'integer' AND value BETWEEN 0 AND ${MAX_COUNT_PER_STREAM_MINUTE}`;

/**
 * The SQLite store's fold statement: adds the increments logged since the last fold (`point_log.seq` >
 * `meta.folded_seq`) to every rollup level (common/rollup-levels.ts; cells per service and over all services, instance cells) at
 * once, in one transaction. Set-based: increments from many exports to the same bucket become one upsert. Hourly and
 * daily levels are therefore never behind the minutes ("downsampling" is continuous); retention later drops
 * the minutes.
 *
 * A series has one increment a minute (one per export), so its levels are summed straight from the log. Many series
 * share a cell and an instance cell: for each of those owners the increments are summed per owner and minute once
 * (into `temp.fold_minutes`), and that owner's levels are summed from those few rows, where reading and sorting the
 * log's rows again for every level made the fold a third dearer (three owners of three levels each).
 *
 * The fold cannot fail on the data: sums saturate at 2^53 − 1 instead of overflowing, and a logged row that is
 * not a count ingest would let in (written by an older build, or by hand) is quarantined: left out of the
 * rollups, counted in `meta.quarantined_points` and reported, while every other row is folded.
 *
 * In the same transaction it records the open hour and bumps the closed-bucket generation when a row lands before it
 * (common/closed-buckets.ts).
 */
export class Folder {
  private readonly statements: Database.Statement[];
  private readonly watermark: Database.Statement;
  private readonly advance: Database.Statement;
  private readonly countBad: Database.Statement;
  private readonly addQuarantined: Database.Statement;
  private readonly readQuarantined: Database.Statement;
  private readonly newestSeq: Database.Statement;
  private readonly transaction: (upto: number) => number;

  constructor(db: Database.Database) {
    const span = `seq > @folded AND seq <= @upto AND ${FOLDABLE}`;
    // The WHERE clause also keeps SQLite from reading ON CONFLICT as a join constraint of the SELECT.
    const upsert = (rollup: RollupLevel, source: string, sum: string, from: string, where: string): Database.Statement =>
      db.prepare(`
        INSERT INTO ${rollup.table} (${rollup.ownerColumn}, ${rollup.bucket}, count)
        SELECT ${source}, ${bucketOf(rollup, 'minute')}, ${safeSum(sum)} FROM ${from} WHERE ${where} GROUP BY 1, 2
        ON CONFLICT (${rollup.ownerColumn}, ${rollup.bucket}) DO UPDATE SET count = min(count + excluded.count, ${MAX_STORED_COUNT})`);
    db.exec('CREATE TEMP TABLE IF NOT EXISTS fold_minutes (owner INTEGER, minute INTEGER NOT NULL, count INTEGER NOT NULL)');
    const clearStaged = db.prepare('DELETE FROM temp.fold_minutes');
    /** The step's increments summed per owner and minute into `temp.fold_minutes`, then every level of the owner from them. */
    const staged = (owner: RollupLevel['owner'], source: string, from = 'point_log'): Database.Statement[] => [
      clearStaged,
      db.prepare(`INSERT INTO temp.fold_minutes (owner, minute, count) SELECT ${source}, minute, ${safeSum('value')} FROM ${from} WHERE ${span} GROUP BY 1, 2`),
      ...ROLLUP_LEVELS.filter((rollup) => rollup.owner === owner).map((rollup) => upsert(rollup, 'owner', 'count', 'temp.fold_minutes', 'true')),
    ];
    // In order: the series' levels; a cell level takes each increment twice, for its service's cell and for the
    // all-services cell; an instance cell level takes it for the instance cell of its series (CROSS JOIN: from the
    // log's range of rows out). What the fold records of the open hour is read from the service cells' minutes,
    // which every row folded adds to.
    this.statements = [
      ...ROLLUP_LEVELS.filter((rollup) => rollup.owner === 'series').map((rollup) => upsert(rollup, 'series_id', 'value', 'point_log', span)),
      ...staged('cell', 'cell_id'),
      // In order: the generation against the open hour as it was, then the open hour.
      ...recordFold('SELECT min(minute) AS oldest, max(minute) AS newest FROM temp.fold_minutes').map((statement) => db.prepare(statement)),
      ...staged('cell', 'all_cell_id'),
      ...staged('instance_cell', 's.instance_cell_id', 'point_log CROSS JOIN series s ON s.id = point_log.series_id'),
      clearStaged,
    ];
    this.watermark = db.prepare("SELECT value FROM meta WHERE key = 'folded_seq'").pluck();
    this.advance = db.prepare("UPDATE meta SET value = @upto WHERE key = 'folded_seq'");
    this.newestSeq = db.prepare('SELECT coalesce(max(seq), 0) FROM point_log').pluck();
    this.countBad = db.prepare(`SELECT count(*) FROM point_log WHERE seq > @folded AND seq <= @upto AND NOT (${FOLDABLE})`).pluck();
    this.addQuarantined = db.prepare(`
      INSERT INTO meta (key, value) VALUES ('quarantined_points', @bad)
      ON CONFLICT (key) DO UPDATE SET value = value + excluded.value`);
    this.readQuarantined = db.prepare("SELECT coalesce((SELECT value FROM meta WHERE key = 'quarantined_points'), 0)").pluck();
    this.transaction = db.transaction((upto: number) => {
      const folded = this.watermark.get() as number;
      const bad = this.countBad.get({ folded, upto }) as number;
      if (bad > 0) this.addQuarantined.run({ bad });
      for (const statement of this.statements) statement.run({ folded, upto });
      this.advance.run({ upto });
      return bad;
    });
  }

  /** The newest logged increment's sequence number (0 when none). */
  newest(): number {
    return this.newestSeq.get() as number;
  }

  /**
   * Folds the increments after the watermark up to `target`, at most `maxRows` sequence numbers of them, in one
   * transaction. Returns how many rows it quarantined and whether the watermark reached `target`.
   */
  foldStep(target: number, maxRows: number): { quarantined: number; done: boolean } {
    const folded = this.watermark.get() as number;
    if (folded >= target) return { quarantined: 0, done: true };
    const upto = Math.min(target, folded + maxRows);
    return { quarantined: this.transaction(upto), done: upto >= target };
  }

  /** Rows quarantined by every fold so far (kept in the database). */
  quarantined(): number {
    return this.readQuarantined.get() as number;
  }
}
