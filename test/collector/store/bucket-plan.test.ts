import { describe, expect, it } from 'vitest';
import { planBuckets } from '../../../collector/store/bucket-plan.js';
import { MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE } from '../../../collector/model/time.js';

describe('bucket plan', () => {
  const options = { minuteHorizonMs: 0, hourlyAboveMs: 2 * MS_PER_DAY, useDays: true };
  const at = (day: number, hour: number, minute: number): number => Date.UTC(2026, 0, day, hour, minute);

  it('covers a short range with minutes only', () => {
    const plan = planBuckets(at(5, 10, 3), at(5, 10, 40), options);
    expect(plan.resolution).toBe('minute');
    expect(plan.minutes[0]).toEqual({ from: at(5, 10, 3) / MS_PER_MINUTE, to: at(5, 10, 40) / MS_PER_MINUTE });
    expect(plan.hours).toEqual([{ from: 0, to: 0 }, { from: 0, to: 0 }]);
  });

  it('splits into minute edges, hour edges and whole days, covering every minute exactly once', () => {
    const plan = planBuckets(at(5, 10, 3), at(6, 23, 59) + 30_000, options);
    expect(plan.resolution).toBe('minute');
    expect(plan.days).toEqual({ from: at(6, 0, 0) / MS_PER_DAY, to: at(7, 0, 0) / MS_PER_DAY });
    const covered = new Set<number>();
    const add = (from: number, to: number, unitMinutes: number): void => {
      for (let minute = from * unitMinutes; minute < to * unitMinutes; minute++) {
        expect(covered.has(minute)).toBe(false);
        covered.add(minute);
      }
    };
    add(plan.days.from, plan.days.to, 1440);
    for (const range of plan.hours) add(range.from, range.to, 60);
    for (const range of plan.minutes) add(range.from, range.to, 1);
    expect(covered.size).toBe((plan.toMs - plan.fromMs) / MS_PER_MINUTE);
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
