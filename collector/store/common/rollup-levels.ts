import { MINUTES_PER_DAY, MINUTES_PER_HOUR } from '../../model/time.js';
import type { RetentionConfig } from '../store.js';

/**
 * The rollup levels, named once: every logged increment is folded into each of them (fold), read from the coarsest
 * one a question allows (readers, trends) and dropped past its window (retention). Series, per instance, have no
 * daily level; cells have.
 */
export interface RollupLevel {
  table: string;
  /** What a row sums: one series (per instance) or one matrix cell. */
  owner: 'series' | 'cell';
  ownerColumn: 'series_id' | 'cell_id';
  bucket: 'minute' | 'hour' | 'day';
  minutes: number;
  /** The retention window that applies. */
  window: keyof Pick<RetentionConfig, 'minuteDays' | 'hourDays'>;
}

const level = (owner: RollupLevel['owner'], bucket: RollupLevel['bucket'], minutes: number): RollupLevel => ({
  table: `${owner}_${bucket}`,
  owner,
  ownerColumn: owner === 'series' ? 'series_id' : 'cell_id',
  bucket,
  minutes,
  window: bucket === 'minute' ? 'minuteDays' : 'hourDays',
});

export const ROLLUP_LEVELS: readonly RollupLevel[] = [
  level('series', 'minute', 1),
  level('series', 'hour', MINUTES_PER_HOUR),
  level('cell', 'minute', 1),
  level('cell', 'hour', MINUTES_PER_HOUR),
  level('cell', 'day', MINUTES_PER_DAY),
];

/** The cells' levels, coarsest first. */
export const CELL_LEVELS = ROLLUP_LEVELS.filter((candidate) => candidate.owner === 'cell').reverse();
/** The series' levels, coarsest first. */
export const SERIES_LEVELS = ROLLUP_LEVELS.filter((candidate) => candidate.owner === 'series').reverse();

/** The coarsest of `levels` (coarsest first) whose buckets divide a step of `stepMinutes`; minutes at worst. */
export function stepLevel(levels: readonly RollupLevel[], stepMinutes: number): RollupLevel {
  return levels.find((candidate) => stepMinutes % candidate.minutes === 0) ?? (levels.at(-1) as RollupLevel);
}

/** SQL: the level's bucket of the minute in `minute` (both dialects divide integers alike). */
export function bucketOf(rollup: RollupLevel, minute: string): string {
  return rollup.minutes === 1 ? minute : `${minute} / ${rollup.minutes}`;
}
