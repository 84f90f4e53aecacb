import { describe, expect, it } from 'vitest';
import { planBuckets } from '../../../collector/store/common/bucket-plan.js';
import { MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE } from '../../../collector/model/time.js';

/**
 * The minutes a plan covers, each at most once. Checked minute by minute, asserted once per plan: an `expect` per
 * minute made this file take seconds.
 */
function covered(plan: ReturnType<typeof planBuckets>): Set<number> {
  const minutes = new Set<number>();
  const twice: number[] = [];
  const add = (from: number, to: number, unitMinutes: number): void => {
    for (let minute = from * unitMinutes; minute < to * unitMinutes; minute++) {
      if (minutes.has(minute)) twice.push(minute);
      minutes.add(minute);
    }
  };
  add(plan.days.from, plan.days.to, 1440);
  for (const range of plan.hours) add(range.from, range.to, 60);
  for (const range of plan.minutes) add(range.from, range.to, 1);
  expect(twice, 'minutes the plan covers more than once').toEqual([]);
  return minutes;
}

describe('bucket plan', () => {
  const options = { minuteHorizonMs: 0, hourlyAboveMs: 2 * MS_PER_DAY, useDays: true };
  const at = (day: number, hour: number, minute: number): number => Date.UTC(2026, 0, day, hour, minute);

  it('covers a short range with minutes only', () => {
    const plan = planBuckets(at(5, 10, 3), at(5, 10, 40), options);
    expect(plan.resolution).toBe('minute');
    expect(plan.minutes[0]).toEqual({ from: at(5, 10, 3) / MS_PER_MINUTE, to: at(5, 10, 40) / MS_PER_MINUTE });
    expect(plan.hours).toEqual([
      { from: 0, to: 0 },
      { from: 0, to: 0 },
    ]);
  });

  it('splits into minute edges, hour edges and whole days, covering every minute exactly once', () => {
    const plan = planBuckets(at(5, 10, 3), at(6, 23, 59) + 30_000, options);
    expect(plan.resolution).toBe('minute');
    expect(plan.days).toEqual({ from: at(6, 0, 0) / MS_PER_DAY, to: at(7, 0, 0) / MS_PER_DAY });
    expect(covered(plan).size).toBe((plan.toMs - plan.fromMs) / MS_PER_MINUTE);
    expect(plan.fromMs).toBe(at(5, 10, 3));
    expect(plan.toMs).toBe(at(7, 0, 0));
  });

  it('answers long ranges and ranges past the minute horizon in whole hours, widened outward, with days inside', () => {
    const plan = planBuckets(at(1, 10, 3), at(8, 10, 3), options);
    expect(plan.resolution).toBe('hour');
    expect(plan.fromMs).toBe(at(1, 10, 0));
    expect(plan.toMs).toBe(at(8, 11, 0));
    expect(plan.days).toEqual({ from: at(2, 0, 0) / MS_PER_DAY, to: at(8, 0, 0) / MS_PER_DAY });
    expect(plan.hours).toEqual([
      { from: at(1, 10, 0) / MS_PER_HOUR, to: at(2, 0, 0) / MS_PER_HOUR },
      { from: at(8, 0, 0) / MS_PER_HOUR, to: at(8, 11, 0) / MS_PER_HOUR },
    ]);
    const old = planBuckets(at(3, 10, 3), at(3, 10, 20), { ...options, minuteHorizonMs: at(4, 0, 0) });
    expect(old.resolution).toBe('hour');
    const noDays = planBuckets(at(1, 10, 3), at(8, 10, 3), { ...options, useDays: false });
    expect(noDays.days).toEqual({ from: 0, to: 0 });
    expect(noDays.hours[0]).toEqual({ from: at(1, 10, 0) / MS_PER_HOUR, to: at(8, 11, 0) / MS_PER_HOUR });
  });
});

describe('bucket plan for a range reaching now', () => {
  const MINUTE = MS_PER_MINUTE;
  const seeks = (plan: ReturnType<typeof planBuckets>): number => [plan.days, ...plan.hours, ...plan.minutes].filter((range) => range.to > range.from).length;

  it('covers every minute of the range once, and beyond it only minutes after now, for ranges of every length and both kinds of rollup', () => {
    const now = Date.UTC(2026, 5, 10, 13, 27, 41);
    let applied = 0;
    for (const useDays of [true, false]) {
      for (const lengthMinutes of [1, 7, 15, 59, 60, 61, 90, 13 * 60 + 28, 24 * 60, 36 * 60, 2 * 1440, 3 * 1440 + 17, 7 * 1440]) {
        for (const toMs of [now, now + 30_000, now + 5 * MINUTE, now - 10 * MINUTE]) {
          const options = { minuteHorizonMs: 0, hourlyAboveMs: 2 * MS_PER_DAY, useDays };
          const fromMs = toMs - lengthMinutes * MINUTE;
          const plain = planBuckets(fromMs, toMs, options);
          const plan = planBuckets(fromMs, toMs, { ...options, nowMs: now });
          const label = `${useDays ? 'days' : 'hours'} ${lengthMinutes} min to ${new Date(toMs).toISOString()}`;
          expect({ fromMs: plan.fromMs, toMs: plan.toMs, resolution: plan.resolution }, label).toEqual({
            fromMs: plain.fromMs,
            toMs: plain.toMs,
            resolution: plain.resolution,
          });
          const wanted = covered(plain);
          const got = covered(plan);
          expect(
            [...wanted].filter((minute) => !got.has(minute)),
            `${label}: minutes of the range left out`,
          ).toEqual([]);
          expect(
            [...got].filter((minute) => !wanted.has(minute) && minute * MINUTE <= now),
            `${label}: minutes beyond the range, not after now`,
          ).toEqual([]);
          expect(seeks(plan), label).toBeLessThanOrEqual(seeks(plain));
          if (seeks(plan) < seeks(plain)) applied++;
        }
      }
    }
    expect(applied).toBeGreaterThan(20);
  });

  it('reads the last 24 hours and the last 7 days without a trailing edge: the hour or day under way from its own row', () => {
    const now = Date.UTC(2026, 5, 10, 13, 27, 41);
    const options = { minuteHorizonMs: 0, hourlyAboveMs: 2 * MS_PER_DAY, useDays: true, nowMs: now };
    const day = planBuckets(now - MS_PER_DAY, now, options);
    expect(day.minutes).toEqual([
      { from: Date.UTC(2026, 5, 9, 13, 27) / MS_PER_MINUTE, to: Date.UTC(2026, 5, 9, 14) / MS_PER_MINUTE },
      { from: 0, to: 0 },
    ]);
    expect(day.hours).toEqual([
      { from: Date.UTC(2026, 5, 9, 14) / MS_PER_HOUR, to: Date.UTC(2026, 5, 10, 14) / MS_PER_HOUR },
      { from: 0, to: 0 },
    ]);
    expect(day.days).toEqual({ from: 0, to: 0 });
    const week = planBuckets(now - 7 * MS_PER_DAY, now, options);
    expect(week.days).toEqual({ from: Date.UTC(2026, 5, 4) / MS_PER_DAY, to: Date.UTC(2026, 5, 11) / MS_PER_DAY });
    expect(week.hours).toEqual([
      { from: Date.UTC(2026, 5, 3, 13) / MS_PER_HOUR, to: Date.UTC(2026, 5, 4) / MS_PER_HOUR },
      { from: 0, to: 0 },
    ]);
    // A range that ends before now is planned as it is.
    expect(planBuckets(now - MS_PER_DAY, now - 2 * MS_PER_HOUR, options)).toEqual(
      planBuckets(now - MS_PER_DAY, now - 2 * MS_PER_HOUR, { ...options, nowMs: undefined }),
    );
  });
});
