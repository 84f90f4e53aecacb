/**
 * What readers of the store are asked: a range, narrowed by service (and instance, client, extension). Consumers
 * (analysis, routes, alert rules) import these; the dialects answer them.
 */

import type { Resolution } from '../../model/records.js';
import { MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE } from '../../model/time.js';

/** A matrix over more than two days is answered in whole hours (see docs/api.md). */
export const HOURLY_ABOVE_MS = 2 * MS_PER_DAY;

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
  /** Only this client name's cells (exact); implies {@link clients}. */
  clientName?: string | undefined;
  /**
   * Keep each cell's client name and version: read from the series, a seek per series. Otherwise the instance
   * cells are read (the clients summed, their names and versions null), a seek per instance cell: the same counts.
   */
  clients?: boolean | undefined;
  /** Only the request cells (kind 0): what rows are ranked by (analysis/read-matrix.ts). Instance cells only: not with {@link clients}. */
  requestsOnly?: boolean | undefined;
  /** Only these instances, by the store's id of each (their cell totals' `instanceRef`). Instance cells only: not with {@link clients}. */
  instanceRefs?: readonly number[] | undefined;
  /**
   * The instances of each service summed (rows by service): a total per service and cell, its instance, build and
   * `instanceRef` (0) naming none. Fewer totals to keep for a long range's closed part and to build rows from.
   */
  perService?: boolean | undefined;
}

/**
 * The whole buckets a cell read of `query` sums, as far as its range alone says: whole minutes, or whole hours over
 * {@link HOURLY_ABOVE_MS}. A store answers in whole hours too where the range reaches back past its minute rollups.
 */
export function likelyCellBuckets(query: FilterQuery): { fromMs: number; toMs: number; resolution: Resolution } {
  const fromMs = Math.floor(query.fromMs / MS_PER_MINUTE) * MS_PER_MINUTE;
  const toMs = Math.max(fromMs + MS_PER_MINUTE, Math.ceil(query.toMs / MS_PER_MINUTE) * MS_PER_MINUTE);
  if (toMs - fromMs <= HOURLY_ABOVE_MS) return { fromMs, toMs, resolution: 'minute' };
  return { fromMs: Math.floor(fromMs / MS_PER_HOUR) * MS_PER_HOUR, toMs: Math.ceil(toMs / MS_PER_HOUR) * MS_PER_HOUR, resolution: 'hour' };
}

/** Whether an instance cell read needs the series (the clients' names and versions), or the instance cells answer it. */
export const needsClients = (query: InstanceCellQuery): boolean => query.clients === true || query.clientName !== undefined;

export interface StepQuery extends FilterQuery {
  extensionId: string;
  stepMinutes: number;
  clientName?: string | undefined;
}

/** Where the history held begins: over all services, or one service's. */
export interface HistoryQuery {
  service?: string | undefined;
}
