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

/** The `meta` keys the two facts are kept under. */
const CLOSED_GENERATION_KEY = 'closed_generation';
const OPEN_HOUR_KEY = 'open_hour';

/**
 * What a fold of increments whose minutes span [`oldestMinute`, `newestMinute`] makes of `before`: the open hour
 * moves to the newest hour folded (never back), and the generation is bumped when an increment fell before the open
 * hour as it was.
 */
export function afterFold(before: ClosedBuckets, oldestMinute: number, newestMinute: number): ClosedBuckets & { bumped: boolean } {
  const newestHour = Math.floor(newestMinute / 60);
  const bumped = before.openHour !== null && Math.floor(oldestMinute / 60) < before.openHour;
  return {
    generation: before.generation + (bumped ? 1 : 0),
    openHour: before.openHour === null ? newestHour : Math.max(before.openHour, newestHour),
    bumped,
  };
}

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

/**
 * The statement a fold runs in its transaction after adding increments whose minutes span [`oldestMinute`,
 * `newestMinute`] (none: `span` null), `before` being what {@link READ_CLOSED_BUCKETS} read in that transaction;
 * undefined when nothing changes (the usual fold: within the open hour).
 */
export function recordFold(before: ClosedBuckets, span: { oldest: number | null; newest: number | null } | undefined): string | undefined {
  if (span?.oldest === null || span?.oldest === undefined || span.newest === null) return undefined;
  const after = afterFold(before, Number(span.oldest), Number(span.newest));
  const values: string[] = [];
  if (after.bumped) values.push(`('${CLOSED_GENERATION_KEY}', '${after.generation}')`);
  if (after.openHour !== before.openHour) values.push(`('${OPEN_HOUR_KEY}', '${after.openHour}')`);
  // Integers computed here, not text from outside: written as literals.
  return values.length === 0 ? undefined : `INSERT INTO meta (key, value) VALUES ${values.join(', ')} ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
}
