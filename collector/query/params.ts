/**
 * Query-string schemas shared by the API routes, and the parsing that a schema cannot express (a date that
 * matches the pattern but does not exist, `from` after `to`). Errors name the parameter.
 */

const RELATIVE = '-\\d{1,6}[smhdw]';
const EPOCH_MS = '\\d{1,15}';
const ISO = '\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:?\\d{2})?)?';

/** `now`, `-15m`/`-24h`/`-7d` (before now), Unix milliseconds, or ISO 8601. */
export const timeSchema = { type: 'string', maxLength: 40, pattern: `^(now|${RELATIVE}|${EPOCH_MS}|${ISO})$` } as const;
/** A filter value: service name, instance id, client name… */
export const nameSchema = { type: 'string', minLength: 1, maxLength: 256 } as const;
/** `1m`, `5m`, `1h`, `1d`… */
export const stepSchema = { type: 'string', pattern: '^\\d{1,5}[mhd]$' } as const;

export const rangeProperties = { from: timeSchema, to: timeSchema } as const;

export interface RangeQuery {
  from?: string;
  to?: string;
}

/** A 400 whose message names the offending parameter. */
export function badRequest(message: string): Error & { statusCode: number; code: string } {
  return Object.assign(new Error(message), { statusCode: 400, code: 'EXTSCOPE_BAD_PARAMETER' });
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

export function parseTime(name: string, value: string, now: number): number {
  if (value === 'now') return now;
  if (value.startsWith('-')) return now - Number(value.slice(1, -1)) * (UNIT_MS[value.slice(-1)] ?? Number.NaN);
  if (/^\d+$/.test(value)) return Number(value);
  const ms = Date.parse(value.replace(' ', 'T'));
  if (Number.isNaN(ms) || !calendarValid(value)) throw badRequest(`${name}: ${JSON.stringify(value)} is not a valid time`);
  return ms;
}

/** Date.parse rolls 2026-02-31 over into March; a time that does not exist is an error here. */
function calendarValid(value: string): boolean {
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0] = (value.match(/\d+/g) ?? []).map(Number);
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour < 24 && minute < 60 && second < 60;
}

export const DEFAULT_RANGE_MS = 24 * 3_600_000;

/**
 * `from`/`to` with defaults: from 24 hours before now, to the newest data there can be, i.e. now plus the clock
 * skew ingest accepts (`openEndMs`), so that points a sender stamped slightly ahead are not left out.
 * `from` must be before `to`.
 */
export function parseRange(query: RangeQuery, now: number, openEndMs = 0): { fromMs: number; toMs: number } {
  const toMs = query.to === undefined ? now + openEndMs : parseTime('to', query.to, now);
  const fromMs = query.from === undefined ? now - DEFAULT_RANGE_MS : parseTime('from', query.from, now);
  if (fromMs >= toMs) throw badRequest('from: must be before to');
  return { fromMs, toMs };
}

/** `1m`, `2h`, `1d` → minutes. */
export function parseStep(value: string): number {
  const amount = Number(value.slice(0, -1));
  const minutes = amount * { m: 1, h: 60, d: 1440 }[value.slice(-1) as 'm' | 'h' | 'd'];
  if (!Number.isInteger(minutes) || minutes <= 0) throw badRequest(`step: ${JSON.stringify(value)} must be a positive number of minutes, hours or days`);
  return minutes;
}

export const iso = (ms: number): string => new Date(ms).toISOString();

/** The JSON schema of nullable strings in responses. */
export const nullableString = { type: ['string', 'null'] } as const;

/** Per extension id: requests where the client declared it, the server advertised it, and both. */
export const extensionCountsSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['id', 'clientDeclared', 'serverAdvertised', 'negotiated'],
    properties: {
      id: { type: 'string' },
      clientDeclared: { type: 'integer' },
      serverAdvertised: { type: 'integer' },
      negotiated: { type: 'integer' },
    },
  },
} as const;
