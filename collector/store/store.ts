import type { MetricsBatch, SpanBatch } from '../model/batches.js';
import { PermanentError, RetryableError } from '../model/errors.js';
import type { ApplyResult, CellTotals, ExampleRecord, InstanceRecord, StepTotal } from '../model/records.js';
import type { TrendReader } from './trends.js';

/**
 * The storage boundary, in three parts (after Prometheus' storage interfaces): what ingest writes, what
 * readers read, and what the service runs. Every method is asynchronous so that a networked store (PostgreSQL,
 * for several collector replicas) implements the same interfaces; the SQLite store does its work
 * synchronously inside. Every backend passes test/collector/store/conformance.ts.
 */

/**
 * - `applyMetrics` applies one batch atomically (all or nothing) and resolves only once it is durable; a point
 *   already applied (same stream, same start and end time) is not applied again; cumulative points are turned
 *   into increments per stream (a new start time or a lower value starts again from zero; a point not newer
 *   than the last one adds nothing), surviving restarts.
 * - `applySpans` keeps the newest few examples per matrix cell.
 * Failures: {@link StoreUnavailableError} (retry later); anything else is a bug.
 */
export interface IngestStore {
  applyMetrics(batch: MetricsBatch): Promise<ApplyResult>;
  applySpans(batch: SpanBatch): Promise<number>;
}

/** Reads see every batch whose apply has resolved. They sum and return rows; they do not interpret them. */
export interface RollupReader extends TrendReader {
  /** True when accepted data may not be visible yet: the store cannot write (disk full, read-only) and reads answer from what is stored. */
  behind(): boolean;
  /** Matrix cells with their totals over the range (widened to whole buckets), zero totals left out. */
  cellTotals(query: CellQuery): Promise<CellTotals>;
  /** Totals per step for request cells and one extension's cells; `fromMs`/`toMs` are whole steps since the epoch. */
  stepTotals(query: StepQuery): Promise<StepTotal[]>;
  instances(query: InstancesQuery): Promise<InstanceRecord[]>;
  /** Newest first. */
  examples(query: ExamplesQuery): Promise<ExampleRecord[]>;
}

export interface StoreLifecycle {
  health(): Promise<StoreHealth>;
  sizeBytes(): Promise<number>;
  /** Makes everything accepted so far visible to reads (the SQLite store folds pending increments). */
  flush(): Promise<void>;
  /** Retention: drops minute rollups, hourly rollups and bookkeeping past their windows. */
  maintain(): Promise<void>;
  /** Numbers about the store's own bookkeeping, for /metrics. */
  stats(): Promise<StoreStats>;
  /** Who runs the background jobs (fold, retention, evaluations) when several collectors share the database. */
  leadership(): Leadership;
  /** Idempotent. */
  close(): Promise<void>;
}

/**
 * Background work that must run on one collector at a time: with several replicas on one database, exactly one
 * of them holds a job and runs it; when that one stops or dies another takes the job at its next run. A
 * single-node store is always the leader.
 */
export interface Leadership {
  /** Runs `work` if this collector holds the job named `job` (taking it when free); false when another one holds it. */
  runExclusive(job: string, work: () => Promise<void>): Promise<boolean>;
}

/** The leadership of a store that only one collector can open: every job runs here. */
export const SOLE_LEADER: Leadership = {
  async runExclusive(_job, work) {
    await work();
    return true;
  },
};

export type Store = IngestStore & RollupReader & StoreLifecycle;

export interface RetentionConfig {
  /** Per-minute rollups. */
  minuteDays: number;
  /** Hourly (and daily) rollups, advertised history, span examples' upper bound. */
  hourDays: number;
  /**
   * How long the identity of every applied delta point is remembered, so that a retried export is recognised.
   * Points older than this are refused (in `partial_success`): they could no longer be told apart from a retry.
   */
  dedupHours: number;
}

export interface FilterQuery {
  fromMs: number;
  toMs: number;
  service?: string | undefined;
}

export interface CellQuery extends FilterQuery {
  /** One instance's series instead of the cells (no daily level). */
  instance?: string | undefined;
}

export interface StepQuery extends FilterQuery {
  extensionId: string;
  stepMinutes: number;
  clientName?: string | undefined;
}

export interface InstancesQuery {
  service?: string | undefined;
  /** Only instances last seen at or after this. */
  seenSinceMs?: number | undefined;
}

export interface ExamplesQuery {
  service?: string | undefined;
  clientName?: string | undefined;
  clientVersion?: string | undefined;
  /** Absent: the row's examples (any extension); present: that cell's. */
  extensionId?: string | undefined;
  limit: number;
}

export interface StoreHealth {
  writable: boolean;
  schemaVersion: number;
  latestSchemaVersion: number;
  error?: string;
}

export interface StoreStats {
  /**
   * The cumulative conversion state: one last total per cumulative stream and sender start time, kept until
   * retention drops a superseded start or a silent instance.
   */
  cumulativeStreams: number;
  /** Logged increments the fold left out because they are not counts ingest accepts (see README). */
  quarantinedPoints: number;
  /** Folds that failed since start (reads then answer from what is stored). */
  foldFailures: number;
  /** New values of sender-controlled dimensions stored as `_OTHER` since start (over the per-dimension limit). */
  overflowedValues: number;
}

/** The store cannot take writes right now (disk full, I/O error, locked); the sender should retry later. */
export class StoreUnavailableError extends RetryableError {
  override readonly name = 'StoreUnavailableError';

  constructor(message: string) {
    // 1 s: OpenTelemetry exporters wait exactly Retry-After and give up when that passes their deadline (the
    // agent's is 2 s), so a longer wait would mean no retry at all.
    super(message, 'store_unavailable', 1);
  }
}

/** The database was written by a newer extscope: this one would misread it, so it refuses to start. */
export class SchemaTooNewError extends PermanentError {
  override readonly name = 'SchemaTooNewError';

  constructor(message: string) {
    super(message, 'schema_too_new');
  }
}
