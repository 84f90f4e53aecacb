/**
 * Which steps of a series are not final yet (analysis/timeseries.ts `partialFrom`): the step under way, and the one
 * before it while its points may still be on their way (within the default export interval of its end).
 */
import { describe, expect, it } from 'vitest';
import { partialFrom } from '../../../collector/analysis/timeseries.js';

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 11, 6, 12, 0);

describe('partialFrom', () => {
  it('minute steps: the step under way and the one that ended less than a minute ago', () => {
    // 15 steps, 12:00 to 12:15; now 12:14:30: the 12:13 step ended 30 s ago, 12:14 is under way.
    expect(partialFrom(T0, T0 + 15 * MINUTE, 1, T0 + 14.5 * MINUTE)).toBe(T0 + 13 * MINUTE);
  });

  it('a step that ended a whole export interval ago is final', () => {
    // Now 12:14:00 exactly: 12:13 ended now, so it is not final; 12:12 ended a minute ago and is.
    expect(partialFrom(T0, T0 + 15 * MINUTE, 1, T0 + 14 * MINUTE)).toBe(T0 + 13 * MINUTE);
    expect(partialFrom(T0, T0 + 15 * MINUTE, 1, T0 + 14 * MINUTE + 1)).toBe(T0 + 13 * MINUTE);
  });

  it('hour steps: only the hour under way, once its start is more than a minute past', () => {
    expect(partialFrom(T0, T0 + 24 * 60 * MINUTE, 60, T0 + (23 * 60 + 30) * MINUTE)).toBe(T0 + 23 * 60 * MINUTE);
    // 30 s into an hour: the hour before ended 30 s ago, so it is not final either.
    expect(partialFrom(T0, T0 + 24 * 60 * MINUTE, 60, T0 + 23 * 60 * MINUTE + 30_000)).toBe(T0 + 22 * 60 * MINUTE);
  });

  it('a series that ended more than a minute ago: every step final (null)', () => {
    expect(partialFrom(T0, T0 + 15 * MINUTE, 1, T0 + 16 * MINUTE + 1)).toBeNull();
  });

  it('a series that began less than a minute ago: from its first step', () => {
    expect(partialFrom(T0, T0 + 5 * MINUTE, 5, T0 + 30_000)).toBe(T0);
  });
});
