import { MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE, msToNanos } from '../../model/time.js';
import type { RetentionConfig } from '../store.js';
import { HOURLY_ABOVE_MS } from '../query/filters.js';
import type { PlanOptions } from './bucket-plan.js';
import { ROLLUP_LEVELS, type RollupLevel } from './rollup-levels.js';

/** Upper bound on stored span examples, whatever the number of cells. */
export const MAX_EXAMPLES = 200_000;

/**
 * The read horizons at `nowMs`: minutes are read only from an hour inside the minute retention (retention drops
 * them an hour at a time), and a range longer than {@link HOURLY_ABOVE_MS} is read in whole hours. With `nowMs`
 * for a dialect that checks nothing is stored ahead of it (see `PlanOptions.nowMs`).
 */
export function readHorizons(nowMs: number, retention: RetentionConfig): Omit<PlanOptions, 'useDays'> {
  return { minuteHorizonMs: nowMs - retention.minuteDays * MS_PER_DAY + MS_PER_HOUR, hourlyAboveMs: HOURLY_ABOVE_MS, nowMs };
}

/** What retention drops at `nowMs`: everything before these. */
export interface RetentionCutoffs {
  /** Logged increment identities, and cumulative state superseded by a newer start (points older are refused). */
  dedupNs: bigint;
  /** Hours of the extension-id limit wholly before the dedup window: their points are refused, so no decision about them is asked for. */
  idLimitHour: number;
  /** Span examples: kept as long as the minutes. */
  examplesMs: number;
  /** The minute and the hour windows, in minutes and hours since the epoch. */
  minute: number;
  hour: number;
  /** Alert history and the delivery log: kept as long as the hourly rollups. */
  historyMs: number;
  /** Instances silent since before the first hour kept: their series, streams and history go too. */
  silentInstancesMs: number;
}

export function retentionCutoffs(nowMs: number, retention: RetentionConfig): RetentionCutoffs {
  const dedupMs = nowMs - retention.dedupHours * MS_PER_HOUR;
  const minute = Math.floor((nowMs - retention.minuteDays * MS_PER_DAY) / MS_PER_MINUTE);
  const hour = Math.floor((nowMs - retention.hourDays * MS_PER_DAY) / MS_PER_HOUR);
  return {
    dedupNs: msToNanos(dedupMs),
    idLimitHour: Math.floor(dedupMs / MS_PER_HOUR),
    examplesMs: minute * MS_PER_MINUTE,
    minute,
    hour,
    historyMs: nowMs - retention.hourDays * MS_PER_DAY,
    silentInstancesMs: hour * MS_PER_HOUR,
  };
}

/** The first bucket of `rollup` retention keeps. */
function firstKept(rollup: RollupLevel, cutoffs: RetentionCutoffs): number {
  const minutes = rollup.window === 'minuteDays' ? cutoffs.minute : cutoffs.hour * 60;
  return Math.floor(minutes / rollup.minutes);
}

/**
 * When each retention window's pass is due: the minute pass when its cutoff moved an hour, the hour pass (with the
 * silent instances) once a day, as remembered by this collector (another replica that takes over simply runs both
 * once more, which deletes nothing twice).
 */
export class RetentionPasses {
  private minuteDone = Number.NEGATIVE_INFINITY;
  private hourDone = Number.NEGATIVE_INFINITY;

  /** The levels whose buckets are due to go, each with the first bucket kept; `hour`: the hour pass is due. */
  due(cutoffs: RetentionCutoffs): { levels: { rollup: RollupLevel; before: number }[]; minute: boolean; hour: boolean } {
    const minute = cutoffs.minute - this.minuteDone >= 60;
    const hour = cutoffs.hour - this.hourDone >= 24;
    const levels = ROLLUP_LEVELS.filter((rollup) => (rollup.window === 'minuteDays' ? minute : hour)).map((rollup) => ({
      rollup,
      before: firstKept(rollup, cutoffs),
    }));
    return { levels, minute, hour };
  }

  minutePassDone(cutoffs: RetentionCutoffs): void {
    this.minuteDone = cutoffs.minute;
  }

  hourPassDone(cutoffs: RetentionCutoffs): void {
    this.hourDone = cutoffs.hour;
  }
}
