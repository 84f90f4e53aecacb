import type { Resolution } from '../../model/records.js';
import { MINUTES_PER_DAY, MINUTES_PER_HOUR, MS_PER_MINUTE } from '../../model/time.js';

/**
 * Splits a time range into the fewest rollup buckets: whole UTC days, then whole hours, then minutes at the
 * ragged edges. Query cost then depends on how many series or cells there are, hardly on the range's length.
 * Any backend keeping minute, hour and day rollups plans its reads this way.
 */

/** Half-open [from, to) in whole units of its level. */
interface UnitRange {
  from: number;
  to: number;
}

export interface BucketPlan {
  fromMs: number;
  toMs: number;
  resolution: Resolution;
  /** Always two ranges per level (possibly empty), so statements have one shape. */
  days: UnitRange;
  hours: [UnitRange, UnitRange];
  minutes: [UnitRange, UnitRange];
}

export interface PlanOptions {
  /** Minute rollups older than this are gone; a range reaching before it is answered in whole hours. */
  minuteHorizonMs: number;
  /** Ranges longer than this are answered in whole hours (widened outward), bounding minute edges. */
  hourlyAboveMs: number;
  /** Whether whole days may come from a daily level (the cell rollups have one, the series rollups do not). */
  useDays: boolean;
  /**
   * The collector's clock, given only while nothing is stored after the minute under way: a range reaching it may
   * then read the day or hour under way from its own row (see {@link endingNow}).
   */
  nowMs?: number;
}

const EMPTY: UnitRange = { from: 0, to: 0 };

/** Whole hours [h0, h1) → whole days in the middle (if allowed) and hour edges. */
function splitHours(h0: number, h1: number, useDays: boolean): { days: UnitRange; hours: [UnitRange, UnitRange] } {
  if (!useDays) return { days: EMPTY, hours: [{ from: h0, to: h1 }, EMPTY] };
  const d0 = Math.ceil(h0 / 24);
  const d1 = Math.floor(h1 / 24);
  if (d1 <= d0) return { days: EMPTY, hours: [{ from: h0, to: h1 }, EMPTY] };
  return {
    days: { from: d0, to: d1 },
    hours: [
      { from: h0, to: d0 * 24 },
      { from: d1 * 24, to: h1 },
    ],
  };
}

/** Ranges covering whole minutes [m0, m1) (whole hours when `hourly`), finest at the edges. */
type Ranges = Pick<BucketPlan, 'days' | 'hours' | 'minutes'>;

function cover(m0: number, m1: number, hourly: boolean, useDays: boolean): Ranges {
  if (hourly) return { minutes: [EMPTY, EMPTY], ...splitHours(m0 / 60, m1 / 60, useDays) };
  const ha = Math.ceil(m0 / 60);
  const hb = Math.floor(m1 / 60);
  if (hb <= ha) return { days: EMPTY, hours: [EMPTY, EMPTY], minutes: [{ from: m0, to: m1 }, EMPTY] };
  return {
    minutes: [
      { from: m0, to: ha * 60 },
      { from: hb * 60, to: m1 },
    ],
    ...splitHours(ha, hb, useDays),
  };
}

const isEmpty = (range: UnitRange): boolean => range.to <= range.from;

/** How many ranges a reader looks up (one seek per cell or series each). */
const seeks = (ranges: Ranges): number => [ranges.days, ...ranges.hours, ...ranges.minutes].filter((range) => !isEmpty(range)).length;

/** `range` followed by the unit `unit` (contiguous with it when it is not empty). */
const extended = (range: UnitRange, unit: number): UnitRange => ({ from: isEmpty(range) ? unit : range.from, to: unit + 1 });

/**
 * A range that reaches the minute under way may be read up to the end of the day or hour under way from that unit's
 * own row: nothing is stored after the minute under way (the reader checks), so the unit's row holds exactly its
 * minutes so far, and the range's finer trailing edge is one seek per cell fewer. These are the ways to do so (none
 * when the range ends before now or reaches beyond the unit).
 */
function endingNow(m0: number, m1: number, hourly: boolean, options: PlanOptions): Ranges[] {
  if (options.nowMs === undefined) return [];
  const nowMinute = Math.floor(options.nowMs / MS_PER_MINUTE);
  if (m1 <= nowMinute) return [];
  const ways: Ranges[] = [];
  const today = Math.floor(nowMinute / MINUTES_PER_DAY) * MINUTES_PER_DAY;
  if (options.useDays && today >= m0 && m1 <= today + MINUTES_PER_DAY) {
    const rest = cover(m0, today, hourly, true);
    ways.push({ ...rest, days: extended(rest.days, today / MINUTES_PER_DAY) });
  }
  const thisHour = Math.floor(nowMinute / MINUTES_PER_HOUR) * MINUTES_PER_HOUR;
  if (thisHour >= m0 && m1 <= thisHour + MINUTES_PER_HOUR) {
    const rest = cover(m0, thisHour, hourly, options.useDays);
    // With whole days inside, the hours after them are the second range (empty when the hour starts a day).
    const last = isEmpty(rest.days) ? 0 : 1;
    const hours: [UnitRange, UnitRange] = [...rest.hours];
    hours[last] = extended(rest.hours[last], thisHour / MINUTES_PER_HOUR);
    ways.push({ ...rest, hours });
  }
  return ways;
}

export function planBuckets(fromMs: number, toMs: number, options: PlanOptions): BucketPlan {
  let m0 = Math.floor(fromMs / MS_PER_MINUTE);
  let m1 = Math.max(m0 + 1, Math.ceil(toMs / MS_PER_MINUTE));
  const hourly = (m1 - m0) * MS_PER_MINUTE > options.hourlyAboveMs || m0 * MS_PER_MINUTE < options.minuteHorizonMs;
  if (hourly) {
    m0 = Math.floor(m0 / 60) * 60;
    m1 = Math.ceil(m1 / 60) * 60;
  }
  // The way with the fewest seeks; the range as it is when nothing saves one.
  const { days, hours, minutes } = [cover(m0, m1, hourly, options.useDays), ...endingNow(m0, m1, hourly, options)].reduce((best, way) =>
    seeks(way) < seeks(best) ? way : best,
  );
  // Empty ranges in one form: a reader may leave them out.
  const tidy = (range: UnitRange): UnitRange => (isEmpty(range) ? EMPTY : range);
  return {
    fromMs: m0 * MS_PER_MINUTE,
    toMs: m1 * MS_PER_MINUTE,
    resolution: hourly ? 'hour' : 'minute',
    days: tidy(days),
    hours: [tidy(hours[0]), tidy(hours[1])],
    minutes: [tidy(minutes[0]), tidy(minutes[1])],
  };
}

/** One of a plan's ranges as a reader sums it: the rollup table, its bucket column, and the parameters bounding it. */
export type PlanRange = readonly [table: string, bucket: string, from: string, to: string];

/** A plan's ranges over the cell rollups (see {@link planParameters}). */
export const CELL_RANGES: readonly PlanRange[] = [
  ['cell_day', 'day', 'd0', 'd1'],
  ['cell_hour', 'hour', 'h0', 'h1'],
  ['cell_hour', 'hour', 'h2', 'h3'],
  ['cell_minute', 'minute', 'm0', 'm1'],
  ['cell_minute', 'minute', 'm2', 'm3'],
];

/** The same over the series rollups, which have no daily level. */
export const SERIES_RANGES: readonly PlanRange[] = CELL_RANGES.filter(([table]) => table !== 'cell_day').map(
  ([table, ...rest]) => [table.replace('cell_', 'series_'), ...rest] as const,
);

/** The same over the instance cells' rollups, which have a daily level too. */
export const INSTANCE_CELL_RANGES: readonly PlanRange[] = CELL_RANGES.map(([table, ...rest]) => [`instance_${table}`, ...rest] as const);

/**
 * The plan's hours when it is one range of whole hours and nothing else: how the open part of a long range is read (it
 * starts at the open hour, closed-range-cache.ts), which a reader may read from the hour out (only what is in it).
 */
export function onlyHours(plan: BucketPlan): { from: number; to: number } | undefined {
  const rest = [plan.days, plan.hours[1], ...plan.minutes];
  return isEmpty(plan.hours[0]) || rest.some((range) => !isEmpty(range)) ? undefined : plan.hours[0];
}

/** The ranges the plan's parameters leave non-empty: a statement leaves the others out (each would cost a seek per row). */
export function presentRanges(ranges: readonly PlanRange[], parameters: Readonly<Record<string, unknown>>): PlanRange[] {
  return ranges.filter(([, , from, to]) => (parameters[to] as number) > (parameters[from] as number));
}

/** Named parameters for the statements built on a plan. */
export function planParameters(plan: BucketPlan): Record<string, number> {
  return {
    d0: plan.days.from,
    d1: plan.days.to,
    h0: plan.hours[0].from,
    h1: plan.hours[0].to,
    h2: plan.hours[1].from,
    h3: plan.hours[1].to,
    m0: plan.minutes[0].from,
    m1: plan.minutes[0].to,
    m2: plan.minutes[1].from,
    m3: plan.minutes[1].to,
  };
}
