import { describe, expect, it } from 'vitest';
import { JsonMappingError, parseOtlpJson } from '../../collector/otlp/json-mapping.js';
import { matrixCsv } from '../../collector/query/matrix-csv.js';
import { buildMatrixView } from '../../collector/query/matrix-view.js';
import { parseRange, parseStep, parseTime } from '../../collector/query/params.js';
import { MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE, planBuckets } from '../../collector/store/sqlite/bucket-plan.js';

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

describe('OTLP/JSON mapping', () => {
  it('turns hex ids into what the generated code expects and checks the numbers extscope reads', () => {
    const parsed = parseOtlpJson(JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', startTimeUnixNano: 5 }] }] }] }));
    const span = (parsed['resourceSpans'] as { scopeSpans: { spans: Record<string, unknown>[] }[] }[])[0]?.scopeSpans[0]?.spans[0];
    expect(Buffer.from(span?.['traceId'] as string, 'base64').toString('hex')).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(Buffer.from(span?.['spanId'] as string, 'base64').toString('hex')).toBe('b7ad6b7169203331');
    for (const body of [
      '{"a":{"timeUnixNano":"12x"}}',
      '{"a":{"asInt":1.5}}',
      '{"a":{"asDouble":"lots"}}',
      '{"traceId":"xyz"}',
      '{"spanId":"00"}',
      `${'{"a":'.repeat(100)}1${'}'.repeat(100)}`,
      'null',
      '"text"',
    ]) {
      expect(() => parseOtlpJson(body), body).toThrow(JsonMappingError);
    }
    expect(parseOtlpJson('{"a":{"asDouble":"NaN","timeUnixNano":"1700000000000000000","asInt":-3}}')).toBeTruthy();
  });
});

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
    expect(parseRange({}, now, 600_000)).toEqual({ fromMs: now - 86_400_000, toMs: now + 600_000 });
    expect(parseRange({ to: 'now' }, now, 600_000)).toEqual({ fromMs: now - 86_400_000, toMs: now });
    expect(() => parseRange({ from: '-1h', to: '-2h' }, now)).toThrow(/from: must be before to/);
    expect(parseStep('5m')).toBe(5);
    expect(parseStep('2h')).toBe(120);
    expect(parseStep('1d')).toBe(1440);
    expect(() => parseStep('0m')).toThrow(/step/);
  });
});

describe('matrix CSV', () => {
  it('quotes what needs quoting and neutralises formulas', () => {
    const view = buildMatrixView(
      {
        fromMs: 0,
        toMs: 1,
        resolution: 'minute',
        clients: [
          { name: 'a,"b"', version: '1', requests: 2, declaration: { unknown: 0, none: 1, declared: 1 }, extensions: new Map([['x.y/z', { clientDeclared: 1, serverAdvertised: 1, negotiated: 1 }]]) },
          { name: '@SUM(A1)', version: null, requests: 1, declaration: { unknown: 1, none: 0, declared: 0 }, extensions: new Map() },
          { name: null, version: null, requests: 1, declaration: { unknown: 1, none: 0, declared: 0 }, extensions: new Map() },
        ],
      },
      'client',
    );
    expect(matrixCsv(view).split('\r\n')).toEqual([
      'client,name,version,requests,declaration_unknown,declaration_none,declaration_declared,x.y/z client_declared,x.y/z server_advertised,x.y/z negotiated',
      '"a,""b""","a,""b""",,2,0,1,1,1,1,1',
      '(unknown client),,,1,1,0,0,0,0,0',
      "'@SUM(A1),'@SUM(A1),,1,1,0,0,0,0,0",
      '',
    ]);
  });
});
