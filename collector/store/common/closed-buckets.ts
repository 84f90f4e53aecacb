import type { RollupLevel } from './rollup-levels.js';

/**
 * Which rollup buckets are closed, and whether a closed one changed: what lets a long-range read keep the sum of its
 * closed part (closed-range-cache.ts). Both dialects keep the two facts in `meta`, written by the fold in the same
 * transaction as the rollups and by retention after it deletes buckets.
 *
 * The open hour is the newest hour any folded increment fell in, not the clock's: every hour before it is closed,
 * whatever the hosts' clocks say. A fold that adds to an hour before the open one (a late point, at any level: its
 * minute, its hour and its day) bumps the generation, as does every retention pass that deletes buckets; a kept
 * closed part is answered only while the generation it was read under is current. One generation for all levels:
 * a late point changes a bucket of each.
 */
export interface ClosedBuckets {
  /** Bumped whenever a bucket before {@link openHour} changes. */
  generation: number;
  /** Hours since the epoch; null until a fold has recorded one (nothing is then taken as closed). */
  openHour: number | null;
}

/**
 * Whether deleting buckets of `level` changes what a kept closed part sums: kept parts are whole hours, summed from the
 * hour and day levels (closed-range-cache.ts), so dropping minutes leaves them as they are. Retention bumps the
 * generation only when it deleted buckets that do: every kept part is otherwise answered on, not read anew.
 */
export const changesKeptParts = (level: Pick<RollupLevel, 'bucket'>): boolean => level.bucket !== 'minute';

/** The `meta` keys the two facts are kept under. */
const CLOSED_GENERATION_KEY = 'closed_generation';
const OPEN_HOUR_KEY = 'open_hour';

/** `meta`'s values (absent, a number, or a number as text) as {@link ClosedBuckets}. */
export function closedBucketsOf(generation: unknown, openHour: unknown): ClosedBuckets {
  return {
    generation: generation === undefined || generation === null ? 0 : Number(generation),
    openHour: openHour === undefined || openHour === null ? null : Number(openHour),
  };
}

// The statements below are the same text in both dialects (`meta.value` is text in PostgreSQL, untyped in SQLite).

/** Reads the two facts: one row, `generation` and `openHour` (null when not recorded yet; {@link closedBucketsOf}). */
export const READ_CLOSED_BUCKETS = `
  SELECT (SELECT value FROM meta WHERE key = '${CLOSED_GENERATION_KEY}') AS generation,
         (SELECT value FROM meta WHERE key = '${OPEN_HOUR_KEY}') AS "openHour"`;

/** Closed buckets changed otherwise than by a fold (retention deleted some): kept closed parts are read anew. */
export const BUMP_CLOSED_GENERATION = `
  INSERT INTO meta (key, value) VALUES ('${CLOSED_GENERATION_KEY}', '1')
  ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(meta.value AS bigint) + 1 AS text)`;

/** Sets the generation to `generation` (a database copied in place of another one goes on past the old one's). */
export function setClosedGeneration(generation: number): string {
  if (!Number.isSafeInteger(generation)) throw new Error(`not a generation: ${generation}`);
  return `INSERT INTO meta (key, value) VALUES ('${CLOSED_GENERATION_KEY}', '${generation}')
    ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
}

/**
 * What a fold records, as two statements over `span`: a subquery of one row, `oldest` and `newest`, the minutes of the
 * increments it adds (null when none). Run in the fold's transaction, the first before the second (or both in one
 * statement, which reads `meta` as it was before): the generation is bumped when an increment fell before the open
 * hour as it was, and the open hour moves to the newest hour folded (never back).
 */
export function recordFold(span: string): readonly [bump: string, openHour: string] {
  const openHour = `(SELECT CAST(value AS bigint) FROM meta WHERE key = '${OPEN_HOUR_KEY}')`;
  return [
    `INSERT INTO meta (key, value) SELECT '${CLOSED_GENERATION_KEY}', '1' FROM (${span}) AS span WHERE span.oldest / 60 < ${openHour}
     ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(meta.value AS bigint) + 1 AS text)`,
    `INSERT INTO meta (key, value) SELECT '${OPEN_HOUR_KEY}', CAST(span.newest / 60 AS text) FROM (${span}) AS span WHERE span.newest / 60 > coalesce(${openHour}, -1)
     ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
  ];
}
