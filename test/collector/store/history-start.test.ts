import { describe, expect, it } from 'vitest';
import { historyStartMs } from '../../../collector/store/common/queries.js';
import { MS_PER_HOUR, MS_PER_MINUTE } from '../../../collector/model/time.js';

describe('where the history held begins', () => {
  const minute = Date.UTC(2026, 0, 5, 10, 17) / MS_PER_MINUTE;
  const hour = Math.floor(minute / 60);

  it('is the oldest minute when it lies in the oldest hour held', () => {
    expect(historyStartMs(minute, hour)).toBe(Date.UTC(2026, 0, 5, 10, 17));
  });

  it("is the oldest hour's start once that hour's minutes are gone (minute rollups are kept a week, hourly ones longer)", () => {
    expect(historyStartMs(minute, hour - 24 * 8)).toBe((hour - 24 * 8) * MS_PER_HOUR);
    expect(historyStartMs(null, hour)).toBe(hour * MS_PER_HOUR);
  });

  it('is the oldest minute when only minutes are held, and null when nothing is', () => {
    expect(historyStartMs(minute, null)).toBe(minute * MS_PER_MINUTE);
    expect(historyStartMs(null, null)).toBeNull();
  });
});
