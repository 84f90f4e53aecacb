import { MINUTES_PER_DAY, MINUTES_PER_HOUR } from '../../model/time.js';
import type { RetentionConfig } from '../store.js';

/**
 * The rollup levels, named once: every logged increment is folded into each of them (fold), read from the coarsest
 * one a question allows (readers, trends) and dropped past its window (retention). Series, per instance, have no
 * daily level; cells have, and so have instance cells (one instance's series without their client: what rows by
 * instance and a cell's split across instances are read from, one row per instance and extension state however many
 * clients it answered).
 */
export interface RollupLevel {
  table: string;
  /** What a row sums: one series (per instance), one matrix cell, or one instance cell. */
  owner: 'series' | 'cell' | 'instance_cell';
  ownerColumn: 'series_id' | 'cell_id' | 'instance_cell_id';
  bucket: 'minute' | 'hour' | 'day';
  minutes: number;
  /** The retention window that applies. */
  window: keyof Pick<RetentionConfig, 'minuteDays' | 'hourDays'>;
}

const level = (owner: RollupLevel['owner'], bucket: RollupLevel['bucket'], minutes: number): RollupLevel => ({
  table: `${owner}_${bucket}`,
  owner,
  ownerColumn: `${owner}_id`,
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
  level('instance_cell', 'minute', 1),
  level('instance_cell', 'hour', MINUTES_PER_HOUR),
  level('instance_cell', 'day', MINUTES_PER_DAY),
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
