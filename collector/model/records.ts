/**
 * What the store returns: rows and records, summed but not interpreted. What a matrix, a time series or fleet
 * drift mean is decided in analysis/.
 */
import type { InstanceIdentity, SeriesDims, SeriesKind, SpanExample } from './batches.js';
import type { RejectedPoints } from './rejections.js';

/** What the store did with a metrics batch. */
export interface ApplyResult {
  applied: number;
  duplicates: number;
  /** Cumulative points whose increment is beyond {@link MAX_COUNT_PER_STREAM_MINUTE}: taken as a new baseline, not counted (`count_too_large`). */
  rejections?: RejectedPoints[];
  /** The increments this apply added (new ones only), summed per stored series. */
  counts: AppliedCount[];
}

/**
 * Requests one apply added to one stored series: its service and dimensions as stored (after the store's limits,
 * so `_OTHER` where a cap was reached). What a consumer counts "applied by this collector" from, without reading
 * totals back.
 */
export interface AppliedCount {
  service: string | null;
  dims: Readonly<SeriesDims>;
  count: number;
}

/**
 * The most requests one stream (one instance × client version × method × outcome × …) may add to one minute:
 * 10^9, about 16.7 million requests per second for one combination, orders of magnitude beyond what one MCP
 * server process answers. Larger counts are refused where they enter, so that no sum can approach 2^53 through
 * one stream, and every rollup saturates at 2^53 − 1 anyway.
 */
export const MAX_COUNT_PER_STREAM_MINUTE = 1_000_000_000;

/** The rows a matrix is built from. */
export type Resolution = 'minute' | 'hour';

/**
 * One matrix cell with its total over a range: requests of one client name and version, by declaration state
 * (kind 0), or by extension id and the three flags (kind 1).
 */
export interface CellTotal {
  kind: SeriesKind;
  clientName: string | null;
  clientVersion: string | null;
  /** Request cells only. */
  clientDeclaration: string | null;
  /** Extension cells only (null on request cells), as are the flags. */
  extensionId: string | null;
  clientDeclared: boolean | null;
  serverDeclared: boolean | null;
  negotiated: boolean | null;
  count: number;
  /**
   * The stored cell's id, set by the reads of the matrix cells themselves (not those from series or instance cells):
   * the same cell in every read of one store, so a long range's kept part finds a cell by it (closed-range-cache.ts).
   */
  cellId?: number;
}

export interface CellTotals {
  /** The range actually summed: the requested one, widened to whole buckets of `resolution`. */
  fromMs: number;
  toMs: number;
  resolution: Resolution;
  cells: CellTotal[];
  /**
   * The part of `cells` answered before any server instance existed (the request's server declaration is
   * `unknown`), in the same shape and over the same range; absent when the backend cannot tell (then none is).
   */
  serverUnknown?: CellTotal[];
}

/**
 * A cell total of one server instance: what the matrix grouped by service or instance, and a cell's split across
 * instances, are built from. Read from the series (which keep the instance), so it also carries the server's
 * declaration (`unknown`: answered before any server instance existed) and the `-32021` flag of extension cells.
 */
export interface InstanceCellTotal extends CellTotal {
  service: string | null;
  instanceId: string | null;
  /** The key of the instance's build (model/build.ts). */
  build: string | null;
  /** The store's id of the instance: what a read narrowed to some instances names them by (InstanceCellQuery.instanceRefs). */
  instanceRef: number;
  serverDeclaration: string | null;
  /** Extension cells only: the request was answered `-32021` naming this id. */
  required: boolean | null;
}

export interface InstanceCellTotals {
  fromMs: number;
  toMs: number;
  resolution: Resolution;
  cells: InstanceCellTotal[];
}

/** Requests (kind 0) or one extension's requests by flags (kind 1) in the step starting at `tMs`. */
export interface StepTotal {
  tMs: number;
  kind: SeriesKind;
  clientDeclared: boolean | null;
  serverDeclared: boolean | null;
  negotiated: boolean | null;
  count: number;
}

export interface AdvertisedRecord {
  serverName: string | null;
  serverVersion: string | null;
  extensionId: string;
  fingerprint: string | null;
  firstSeenMs: number;
  lastSeenMs: number;
  /** Reported in the instance's latest advertisement. */
  current: boolean;
}

export interface AdvertisedCountRecord {
  serverName: string | null;
  serverVersion: string | null;
  count: number;
  current: boolean;
}

export interface InstanceRecord extends InstanceIdentity {
  /** The build it is a process of (model/build.ts). */
  buildKey: string;
  firstSeenMs: number;
  lastSeenMs: number;
  /** When its last export said the process ended; null while it runs, and for a process killed without one. */
  endedMs: number | null;
  /** Its build's "ended sessions" row (store/common/session-fold.ts): how many ended sessions it holds; null for any other instance. */
  endedSessions: number | null;
  advertisedMs: number | null;
  advertised: AdvertisedRecord[];
  counts: AdvertisedCountRecord[];
}

/** An example request as stored (from a span). */
export type ExampleRecord = SpanExample;
