/**
 * The parsing of query parameters that a schema cannot express (a date that matches the pattern but does not
 * exist, `from` after `to`). Errors name the parameter.
 */
import { PermanentError } from '../model/errors.js';
import { MINUTES_PER_DAY, MINUTES_PER_HOUR, MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE, MS_PER_SECOND, MS_PER_WEEK } from '../model/time.js';

export interface RangeQuery {
  from?: string;
  to?: string;
}

/** A 400 whose message names the offending parameter. */
export function badRequest(message: string): PermanentError {
  return new PermanentError(message, 'bad_parameter');
}

const UNIT_MS: Record<string, number> = { s: MS_PER_SECOND, m: MS_PER_MINUTE, h: MS_PER_HOUR, d: MS_PER_DAY, w: MS_PER_WEEK };
const STEP_MINUTES = { m: 1, h: MINUTES_PER_HOUR, d: MINUTES_PER_DAY } as const;

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

const DEFAULT_RANGE_MS = MS_PER_DAY;

/**
 * `from`/`to` with defaults: from 24 hours before now, to now. A range never reaches past now: a point a sender
 * stamped ahead of the collector's clock (within the skew ingest accepts) is shown once its time has come, rather
 * than every range and chart running into the future. `from` must be before `to`.
 */
export function parseRange(query: RangeQuery, now: number): { fromMs: number; toMs: number } {
  const toMs = query.to === undefined ? now : parseTime('to', query.to, now);
  const fromMs = query.from === undefined ? now - DEFAULT_RANGE_MS : parseTime('from', query.from, now);
  if (fromMs >= toMs) throw badRequest('from: must be before to');
  return { fromMs, toMs };
}

/** `1m`, `2h`, `1d` → minutes. */
export function parseStep(value: string): number {
  const amount = Number(value.slice(0, -1));
  const minutes = amount * STEP_MINUTES[value.slice(-1) as keyof typeof STEP_MINUTES];
  if (!Number.isInteger(minutes) || minutes <= 0) throw badRequest(`step: ${JSON.stringify(value)} must be a positive number of minutes, hours or days`);
  return minutes;
}

export const iso = (ms: number): string => new Date(ms).toISOString();
