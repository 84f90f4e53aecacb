import type pg from 'pg';
import { MAX_STORED_COUNT } from '../common/columns.js';
import type { Folder } from '../common/fold-schedule.js';
import { recordFold } from '../common/closed-buckets.js';
import { ROLLUP_LEVELS, bucketOf } from '../common/rollup-levels.js';

/** Increments moved per fold transaction: a bounded statement, however much piled up. */
const FOLD_BATCH = 50_000;

/**
 * Just after a fold failed (a lock it waited for was not free within `lock_timeout`), a fold waits for its locks
 * only this long: one matrix read folds before each of its reads, and each would wait out the lock again. A lock
 * released meanwhile is taken at once, so the read still sees every acknowledged export.
 */
const BRIEF_LOCK_WAIT_MS = 50;

/** One key for every extscope replica on this database: folds run one at a time, so their row locks never cross. */
export const FOLD_LOCK = "hashtextextended('extscope:fold', 0)";

const clamp = (expression: string): string => `LEAST(${expression}, ${MAX_STORED_COUNT})::bigint`;

/**
 * What each owner's levels are summed from: the moved rows per series, per cell (both cells of each row), per
 * instance cell (of each row's series).
 */
const SOURCES = { series: ['moved', 'series_id'], cell: ['cells', 'owner'], instance_cell: ['instance_cells_moved', 'owner'] } as const;
const OWNERS = Object.keys(SOURCES) as (keyof typeof SOURCES)[];

/**
 * Each owner's increments summed once per (owner, minute), unclamped: a minute level takes these sums as they are and
 * a coarser one sums them again, rather than every level sorting and summing every moved row (a batch's rows share
 * few cells: 6,200 cell rows sum to about 450).
 */
const MINUTE_SUMS = OWNERS.map((owner) => {
  const [from, column] = SOURCES[owner];
  return `${owner}_sums AS (SELECT ${column} AS owner, minute, sum(value) AS value FROM ${from} GROUP BY 1, 2)`;
}).join(',\n  ');

/** One CTE per rollup level: its (owner, bucket) sums added to the level's rows. */
const ADDED = ROLLUP_LEVELS.map((rollup) => {
  const select =
    rollup.minutes === 1
      ? `SELECT owner, minute, ${clamp('value')} FROM ${rollup.owner}_sums`
      : `SELECT owner, ${bucketOf(rollup, 'minute')}, ${clamp('sum(value)')} FROM ${rollup.owner}_sums GROUP BY 1, 2`;
  return `${rollup.table}_added AS (
    INSERT INTO ${rollup.table} (${rollup.ownerColumn}, ${rollup.bucket}, count)
    ${select} ORDER BY 1, 2
    ON CONFLICT (${rollup.ownerColumn}, ${rollup.bucket}) DO UPDATE SET count = ${clamp(`${rollup.table}.count + excluded.count`)})`;
}).join(',\n  ');

/**
 * The closed buckets (common/closed-buckets.ts) recorded by the same statement, over the minutes it moves: both read
 * `meta` as it was before the statement, as the rule asks.
 */
const [BUMP_CLOSED, MOVE_OPEN_HOUR] = recordFold('SELECT min(minute) AS oldest, max(minute) AS newest FROM moved');
const RECORD_CLOSED = `, closed_bumped AS (${BUMP_CLOSED}), open_hour_moved AS (${MOVE_OPEN_HOUR})`;

/**
 * Moves a batch of pending increments into every rollup level (common/rollup-levels.ts) in one statement: the rows
 * are deleted from `pending_increments` and their sums added, per (owner, bucket), to the series' levels, to both
 * cells' levels and to the instance cell's levels ({@link MINUTE_SUMS}). Data-modifying CTEs all run, once, in the statement's transaction: the move is
 * atomic. Rows committed after the statement began stay for the next fold.
 */
const fold = (locked: string): string => `
  WITH moved AS (
    DELETE FROM pending_increments WHERE ${locked} ctid = ANY (ARRAY(SELECT ctid FROM pending_increments LIMIT ${FOLD_BATCH}))
    RETURNING minute, series_id, cell_id, all_cell_id, value
  ),
  cells AS (SELECT cell_id AS owner, minute, value FROM moved UNION ALL SELECT all_cell_id, minute, value FROM moved),
  instance_cells_moved AS (SELECT s.instance_cell_id AS owner, m.minute, m.value FROM moved m JOIN series s ON s.id = m.series_id),
  ${MINUTE_SUMS},
  ${ADDED}
  ${RECORD_CLOSED}
  SELECT count(*)::integer AS moved FROM moved`;

/** The fold in a transaction that holds the fold lock already. */
const FOLD = fold('');

/**
 * The fold as one statement on its own (its own transaction, one round trip): the fold lock taken first, in the
 * statement (an uncorrelated subquery, evaluated once before any row is deleted), waited for or only tried; not
 * got, nothing moves. The statement's snapshot may be older than a fold that committed while it took the lock: the
 * rows that fold moved are deleted already and skipped here, so none is added twice.
 */
const LOCKED_FOLD = {
  wait: { name: 'extscope-fold-waiting', text: fold(`(SELECT true FROM (SELECT pg_advisory_xact_lock(${FOLD_LOCK})) AS l) AND`) },
  try: { name: 'extscope-fold-trying', text: fold(`(SELECT pg_try_advisory_xact_lock(${FOLD_LOCK})) AND`) },
};

/**
 * The fold a read runs itself, ahead of its statement in the same round trip (folded-reads.ts): when anything is
 * pending, the fold lock waited for (as {@link LOCKED_FOLD}.wait) and one batch moved; when nothing is, no lock is
 * taken (the CASE evaluates the lock's subquery only when its condition holds) and nothing is written.
 */
export const FOLD_BEFORE_READ = {
  name: 'extscope-fold-before-read',
  text: fold(
    `(SELECT CASE WHEN EXISTS (SELECT 1 FROM pending_increments) THEN (SELECT true FROM (SELECT pg_advisory_xact_lock(${FOLD_LOCK})) AS l) ELSE false END) AND`,
  ),
};

/**
 * What a read sends ahead of its statement instead of {@link FOLD_BEFORE_READ} while nothing was pending
 * (folded-reads.ts): whether any increment is pending, in a statement that writes nothing.
 */
export const PENDING_BEFORE_READ = {
  name: 'extscope-pending-before-read',
  text: 'SELECT EXISTS (SELECT 1 FROM pending_increments) AS pending',
};

/** Whether a fold that moved `moved` rows may have left more (it moves at most one batch). */
export const foldLeftMore = (moved: number): boolean => moved >= FOLD_BATCH;

/**
 * The PostgreSQL store's fold statement, run on the store's fold schedule (common/fold-schedule.ts): exports append
 * their increments to `pending_increments` (no row shared between exports, so replicas do not queue on each other's
 * locks), and this adds them to the rollups. One fold at a time over all replicas (an advisory lock). In the same
 * transaction it records the open hour and bumps the closed-bucket generation when a row lands before it
 * (common/closed-buckets.ts).
 */
export class PostgresFolder implements Folder {
  constructor(private readonly pool: pg.Pool) {}

  /**
   * `wait`: take the fold lock when another replica holds it; otherwise leave the fold to that one. Every lock is
   * waited for `lock_timeout` (the pool's), or {@link BRIEF_LOCK_WAIT_MS} just after a failed fold (then in a
   * transaction of several statements, which sets it).
   */
  async foldPending({ wait, recentlyFailed }: { wait: boolean; recentlyFailed: boolean }): Promise<void> {
    if (!recentlyFailed) return this.foldAtOnce(wait);
    const client = await this.pool.connect();
    try {
      for (;;) {
        await client.query('BEGIN');
        await client.query(`SET LOCAL lock_timeout = ${BRIEF_LOCK_WAIT_MS}`);
        const { rows: waiting } = await client.query<{ pending: boolean }>('SELECT EXISTS (SELECT 1 FROM pending_increments) AS pending');
        if (waiting[0]?.pending !== true) {
          await client.query('COMMIT');
          break;
        }
        if (wait) await client.query(`SELECT pg_advisory_xact_lock(${FOLD_LOCK})`);
        else {
          const { rows } = await client.query<{ locked: boolean }>(`SELECT pg_try_advisory_xact_lock(${FOLD_LOCK}) AS locked`);
          if (rows[0]?.locked !== true) {
            await client.query('COMMIT');
            break;
          }
        }
        const { rows } = await client.query<{ moved: number }>(FOLD);
        await client.query('COMMIT');
        if (!foldLeftMore(rows[0]?.moved ?? 0)) break;
      }
      client.release();
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release(error as Error);
      throw error;
    }
  }

  /**
   * Each batch in one statement ({@link LOCKED_FOLD}): one round trip where there is anything to fold. A read
   * (`wait`) looks first whether anything waits, so that it does not queue for another replica's fold with nothing
   * of its own to move; the schedule's fold (which only tries the lock) does not need to.
   */
  private async foldAtOnce(wait: boolean): Promise<void> {
    if (wait && !(await this.pending())) return;
    for (;;) {
      const { rows } = await this.pool.query<{ moved: number }>({ ...(wait ? LOCKED_FOLD.wait : LOCKED_FOLD.try), values: [] });
      if (!foldLeftMore(rows[0]?.moved ?? 0)) return;
    }
  }

  /** Whether anything waits: one cheap look, so that a read with nothing to fold costs one round trip. */
  private async pending(): Promise<boolean> {
    const { rows } = await this.pool.query<{ pending: boolean }>('SELECT EXISTS (SELECT 1 FROM pending_increments) AS pending');
    return rows[0]?.pending === true;
  }
}
