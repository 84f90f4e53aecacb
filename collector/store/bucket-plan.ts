import type { Resolution } from '../model/records.js';
import { MS_PER_HOUR, MS_PER_MINUTE } from '../model/time.js';

/**
 * Splits a time range into the fewest rollup buckets: whole UTC days, then whole hours, then minutes at the
 * ragged edges. Query cost then depends on how many series or cells there are, hardly on the range's length.
 * Any backend keeping minute, hour and day rollups plans its reads this way.
 */

/** Half-open [from, to) in whole units of its level. */
export interface UnitRange {
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
}

const EMPTY: UnitRange = { from: 0, to: 0 };

/** Whole hours [h0, h1) → whole days in the middle (if allowed) and hour edges. */
function splitHours(h0: number, h1: number, useDays: boolean): { days: UnitRange; hours: [UnitRange, UnitRange] } {
  if (!useDays) return { days: EMPTY, hours: [{ from: h0, to: h1 }, EMPTY] };
  const d0 = Math.ceil(h0 / 24);
  const d1 = Math.floor(h1 / 24);
  if (d1 <= d0) return { days: EMPTY, hours: [{ from: h0, to: h1 }, EMPTY] };
  return { days: { from: d0, to: d1 }, hours: [{ from: h0, to: d0 * 24 }, { from: d1 * 24, to: h1 }] };
}

export function planBuckets(fromMs: number, toMs: number, options: PlanOptions): BucketPlan {
  const m0 = Math.floor(fromMs / MS_PER_MINUTE);
  const m1 = Math.max(m0 + 1, Math.ceil(toMs / MS_PER_MINUTE));
  const hourly = (m1 - m0) * MS_PER_MINUTE > options.hourlyAboveMs || m0 * MS_PER_MINUTE < options.minuteHorizonMs;
  if (hourly) {
    const h0 = Math.floor(m0 / 60);
    const h1 = Math.ceil(m1 / 60);
    return { fromMs: h0 * MS_PER_HOUR, toMs: h1 * MS_PER_HOUR, resolution: 'hour', minutes: [EMPTY, EMPTY], ...splitHours(h0, h1, options.useDays) };
  }
  const ha = Math.ceil(m0 / 60);
  const hb = Math.floor(m1 / 60);
  if (hb <= ha) {
    return { fromMs: m0 * MS_PER_MINUTE, toMs: m1 * MS_PER_MINUTE, resolution: 'minute', days: EMPTY, hours: [EMPTY, EMPTY], minutes: [{ from: m0, to: m1 }, EMPTY] };
  }
  return {
    fromMs: m0 * MS_PER_MINUTE,
    toMs: m1 * MS_PER_MINUTE,
    resolution: 'minute',
    minutes: [{ from: m0, to: ha * 60 }, { from: hb * 60, to: m1 }],
    ...splitHours(ha, hb, options.useDays),
  };
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
