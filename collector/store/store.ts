import type { ApplyResult, InstanceIdentity, MetricsBatch, SpanBatch, SpanExample } from '../processing/points.js';
import type { TrendStore } from './trends.js';

/**
 * The storage boundary. Ingest hands in validated batches; the query API reads aggregates. Every method is
 * asynchronous so that a networked store (PostgreSQL, for several collector replicas) can implement the same
 * interface; the SQLite store does its work synchronously inside.
 *
 * Contract for implementations:
 * - `applyMetrics` applies one batch atomically (all or nothing) and resolves only once it is durable; a point
 *   already applied (same stream, same start and end time) is not applied again; cumulative points are turned
 *   into increments per stream, surviving restarts. It may refuse the batch with an `ExportRejection`
 *   (a limit that needs stored state to check), in which case nothing is stored.
 * - Reads see every batch whose `applyMetrics` has resolved.
 */
export interface Store extends TrendStore {
  applyMetrics(batch: MetricsBatch): Promise<ApplyResult>;
  applySpans(batch: SpanBatch): Promise<number>;

  matrix(query: MatrixQuery): Promise<MatrixResult>;
  timeseries(query: TimeseriesQuery): Promise<TimeseriesResult>;
  instances(query: InstancesQuery): Promise<InstanceRecord[]>;
  examples(query: ExamplesQuery): Promise<SpanExample[]>;

  health(): Promise<StoreHealth>;
  sizeBytes(): Promise<number>;
  /** Makes everything accepted so far visible to reads (the SQLite store folds pending increments). */
  flush(): Promise<void>;
  /** Retention: drops minute rollups, hourly rollups and bookkeeping past their windows. */
  maintain(): Promise<void>;
  close(): Promise<void>;
}

export interface FilterQuery {
  fromMs: number;
  toMs: number;
  service?: string | undefined;
}

export interface MatrixQuery extends FilterQuery {
  instance?: string | undefined;
}

export interface ExtensionCounts {
  /** Requests where the client declared the id. */
  clientDeclared: number;
  /** Requests where the answering server advertised it. */
  serverAdvertised: number;
  /** Requests where both did. */
  negotiated: number;
}

/** One client name and version (either may be absent: null). */
export interface MatrixClient {
  name: string | null;
  version: string | null;
  requests: number;
  declaration: { unknown: number; none: number; declared: number };
  extensions: Map<string, ExtensionCounts>;
}

export interface MatrixResult {
  /** The range actually summed: the requested one, widened to whole buckets of `resolution`. */
  fromMs: number;
  toMs: number;
  resolution: 'minute' | 'hour';
  clients: MatrixClient[];
}

export interface TimeseriesQuery extends FilterQuery {
  extensionId: string;
  stepMinutes: number;
  clientName?: string | undefined;
}

export interface TimeseriesPoint extends ExtensionCounts {
  tMs: number;
  requests: number;
}

export interface TimeseriesResult {
  fromMs: number;
  toMs: number;
  stepMinutes: number;
  points: TimeseriesPoint[];
}

export interface InstancesQuery {
  service?: string | undefined;
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
  firstSeenMs: number;
  lastSeenMs: number;
  advertisedMs: number | null;
  advertised: AdvertisedRecord[];
  counts: AdvertisedCountRecord[];
}

export interface ExamplesQuery {
  service?: string | undefined;
  clientName?: string | undefined;
  clientVersion?: string | undefined;
  extensionId?: string | undefined;
  limit: number;
}

export interface StoreHealth {
  writable: boolean;
  schemaVersion: number;
  latestSchemaVersion: number;
  error?: string;
}

/** The store cannot take writes right now (disk full, I/O error, locked); the sender should retry later. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}
