import { MS_PER_MINUTE } from '../../model/time.js';
import type { StepQuery } from '../query/filters.js';

/** The named parameters of both backends' step queries over a rollup level of `minutes`-long buckets. */
export function stepParameters(query: StepQuery, minutes: number): Record<string, string | number | null> {
  const m0 = Math.floor(query.fromMs / MS_PER_MINUTE);
  const m1 = Math.ceil(query.toMs / MS_PER_MINUTE);
  return {
    m0,
    step: query.stepMinutes,
    b0: Math.floor(m0 / minutes),
    b1: Math.ceil(m1 / minutes),
    extension: query.extensionId,
    service: query.service ?? null,
    client: query.clientName ?? null,
  };
}

/**
 * The start of the oldest minute held, from the oldest minute and oldest hour in the matrix rollups (each as
 * minutes or hours since the epoch): minute rollups go after a week, hourly ones are kept longer, so the minute is
 * exact only when it lies in that oldest hour; otherwise the hour's start is. Null when nothing is held.
 */
export function historyStartMs(oldestMinute: number | null, oldestHour: number | null): number | null {
  if (oldestHour === null) return oldestMinute === null ? null : oldestMinute * MS_PER_MINUTE;
  if (oldestMinute !== null && Math.floor(oldestMinute / 60) <= oldestHour) return oldestMinute * MS_PER_MINUTE;
  return oldestHour * 60 * MS_PER_MINUTE;
}
