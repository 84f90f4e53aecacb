import { describe, expect, it } from 'vitest';
import { parseRange, parseStep, parseTime } from '../../../collector/http/params.js';

describe('query parameters', () => {
  const now = Date.UTC(2026, 5, 1, 12, 0);
  it('reads relative, epoch and ISO times, and refuses impossible ones', () => {
    expect(parseTime('from', '-15m', now)).toBe(now - 15 * 60_000);
    expect(parseTime('from', '-7d', now)).toBe(now - 7 * 86_400_000);
    expect(parseTime('from', 'now', now)).toBe(now);
    expect(parseTime('from', '1700000000000', now)).toBe(1_700_000_000_000);
    expect(parseTime('from', '2026-03-01T10:00:00+02:00', now)).toBe(Date.UTC(2026, 2, 1, 8, 0));
    expect(parseTime('from', '2026-03-01', now)).toBe(Date.UTC(2026, 2, 1));
    expect(() => parseTime('from', '2026-02-29', now)).toThrow(/from: "2026-02-29" is not a valid time/);
    expect(parseRange({}, now)).toEqual({ fromMs: now - 86_400_000, toMs: now });
    // A range without `to` ends now, never after it.
    expect(parseRange({ from: '-1h' }, now)).toEqual({ fromMs: now - 3_600_000, toMs: now });
    expect(() => parseRange({ from: '-1h', to: '-2h' }, now)).toThrow(/from: must be before to/);
    expect(parseStep('5m')).toBe(5);
    expect(parseStep('2h')).toBe(120);
    expect(parseStep('1d')).toBe(1440);
    expect(() => parseStep('0m')).toThrow(/step/);
  });
});
