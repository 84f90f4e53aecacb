import { MS_PER_MINUTE } from '../../model/time.js';

/** The reads over rollups: a range, narrowed by service (and instance, client, extension). */
export interface FilterQuery {
  fromMs: number;
  toMs: number;
  service?: string | undefined;
  /**
   * Aborted when whoever asked has gone (the connection closed before the answer): a read in chunks (SQLite) stops
   * at its next chunk with the signal's reason, instead of finishing work nobody will receive.
   */
  signal?: AbortSignal | undefined;
}

export interface CellQuery extends FilterQuery {
  /** One instance's series instead of the cells (no daily level). */
  instance?: string | undefined;
}

export interface InstanceCellQuery extends CellQuery {
  /** Only this client name's cells (exact). */
  clientName?: string | undefined;
}

export interface StepQuery extends FilterQuery {
  extensionId: string;
  stepMinutes: number;
  clientName?: string | undefined;
}

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

/** Where the history held begins: over all services, or one service's. */
export interface HistoryQuery {
  service?: string | undefined;
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
