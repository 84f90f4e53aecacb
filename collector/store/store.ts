import type { Alert, AlertState, AlertTransition } from '../model/alerts.js';
import type { MetricsBatch, SpanBatch } from '../model/batches.js';
import { PermanentError, RetryableError, UnsupportedError } from '../model/errors.js';
import type { ApplyResult, CellTotals, ExampleRecord, InstanceCellTotals, InstanceRecord, StepTotal } from '../model/records.js';
import type { CellQuery, HistoryQuery, InstanceCellQuery, StepQuery } from './query/filters.js';
import type { TrendReader } from './query/trends.js';

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
  /**
   * Cell totals per server instance (service and instance id) over the range, from the series rollups (no daily
   * level: whole hours past the minute horizon), zero totals left out. `instance`, `service` and `clientName`
   * narrow what is read.
   */
  instanceCellTotals(query: InstanceCellQuery): Promise<InstanceCellTotals>;
  /** Totals per step for request cells and one extension's cells; `fromMs`/`toMs` are whole steps since the epoch. */
  stepTotals(query: StepQuery): Promise<StepTotal[]>;
  /** The part of {@link stepTotals} answered before any server instance existed (server declaration `unknown`), in the same shape. */
  serverUnknownStepTotals(query: StepQuery): Promise<StepTotal[]>;
  instances(query: InstancesQuery): Promise<InstanceRecord[]>;
  /**
   * Where the history held begins: the start of the oldest minute in the matrix rollups (all services, or one
   * service's), whenever its points were sent (a backfill counts from its own timestamps); null when none.
   */
  historyStart(query: HistoryQuery): Promise<number | null>;
  /** Newest first. */
  examples(query: ExamplesQuery): Promise<ExampleRecord[]>;
}

/**
 * What the distinct-extension-id limit has admitted, per instance and UTC hour, kept by the store so that a
 * restart (or another replica) decides a retried export as the first attempt was decided.
 */
export interface ExtensionIdLimitStore {
  /** The ids admitted so far for each (instance, hour) asked for; a pair with none is left out. */
  admittedIds(keys: readonly InstanceHour[]): Promise<InstanceHourIds[]>;
  /** Adds ids to their (instance, hour) sets, atomically; durable once it resolves. */
  admitIds(entries: readonly InstanceHourIds[]): Promise<void>;
  /**
   * Adds each entry's ids (in order) to its set while the set holds fewer than `max`, atomically against every
   * other writer (with several collectors on one store, the room left in a set is theirs too), and returns each
   * set as it then is; durable once it resolves.
   */
  admitIdsWithin(entries: readonly InstanceHourIds[], max: number): Promise<InstanceHourIds[]>;
}

export interface InstanceHour {
  /** The instance as sent (service and instance id), canonical text. */
  instance: string;
  /** Hours since the epoch (UTC). */
  hour: number;
}

export interface InstanceHourIds extends InstanceHour {
  ids: readonly string[];
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
  /** Closes; a database this open created (a new SQLite file) is removed: a start that failed leaves nothing behind. */
  discard(): Promise<void>;
}

/**
 * Alert states and their history (collector/model/alerts.ts). One evaluator writes (on one replica at a
 * time); the API reads. An alert is kept per activation: (fingerprint, activeSinceMs); at most one activation
 * of a fingerprint is not resolved.
 */
export interface AlertStateStore {
  /** Every alert pending or firing, as the last evaluation left it (the evaluator resumes from these). */
  activeAlerts(): Promise<Alert[]>;
  /**
   * One evaluation's changes, atomically: each alert inserted or, when its activation is stored, updated; each
   * transition appended once (a transition id already stored adds nothing).
   */
  recordAlerts(changes: AlertChanges): Promise<void>;
  /** Current and past alerts: firing, pending, then resolved; within each the most recently started first, then by rule, service and labels. */
  alerts(query: AlertQuery): Promise<AlertPage>;
  /** Retention: resolved alerts (and their transitions) resolved before this go. */
  pruneAlerts(resolvedBeforeMs: number): Promise<number>;
}

export interface AlertChanges {
  alerts: readonly Alert[];
  transitions: readonly AlertTransition[];
}

export interface AlertQuery {
  /** Any of these states; absent: all. */
  states?: readonly AlertState[] | undefined;
  rule?: string | undefined;
  /** The alert's `service` label. */
  service?: string | undefined;
  limit: number;
  offset: number;
}

export interface AlertRecord extends Alert {
  /** Oldest first. */
  transitions: { from: AlertTransition['from']; to: AlertState; atMs: number }[];
}

export interface AlertPage {
  /** Alerts matching the query over all pages. */
  total: number;
  alerts: AlertRecord[];
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

/**
 * An opened store, as its roles: each part of the collector gets the one it needs (ingest writes, the API and the
 * rules read, the extension-id limit keeps its sets, the alert engine its states, delivery its log, the service
 * runs the lifecycle). Each backend builds them over what they share (its connection, its write queue, its fold).
 */
export interface StoreRoles {
  ingest: IngestStore;
  reader: RollupReader;
  idLimits: ExtensionIdLimitStore;
  alerts: AlertStateStore;
  deliveries: DeliveryLogStore;
  lifecycle: StoreLifecycle;
  /** The store's own online backup; a backend whose database has its own tools refuses it ({@link NO_ONLINE_BACKUP}). */
  backup: StoreBackup;
}

/** A consistent copy of the database while the store is in use (ingest goes on meanwhile). */
export interface StoreBackup {
  /**
   * Writes a self-contained copy to `destination` (which must not exist) and resolves once it is complete;
   * {@link UnsupportedError} from a store that leaves backups to its database's own tools.
   */
  backup(destination: string): Promise<BackupResult>;
}

/**
 * The backup role of a store whose database has its own backup and replication tools (PostgreSQL: pg_dump):
 * every backup is refused, saying which tools to use, rather than the role being absent for callers to test.
 */
export const NO_ONLINE_BACKUP: StoreBackup = {
  async backup() {
    throw new UnsupportedError("this store has no online backup; use the database's own tools (PostgreSQL: pg_dump)", 'backup_unsupported');
  },
};

export interface BackupResult {
  bytes: number;
  schemaVersion: number;
}

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
  /**
   * Sessions that ended longer ago than this are folded into their build's "ended sessions" row
   * (common/session-fold.ts; the service passes `EXTSCOPE_ENDED_TTL_MINUTES`). Absent: none are.
   */
  endedSessionsMs?: number;
}

/** Seven days of minutes, 400 of hours and days, six hours of retry recognition. */
export const DEFAULT_RETENTION: RetentionConfig = { minuteDays: 7, hourDays: 400, dedupHours: 6 };

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
  /** New instances stored under `_OTHER` since start: their service name or instance id was over its limit. */
  overflowedInstances: number;
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

/** Where one notification of one alert transition stands with one receiver. */
export type DeliveryState = 'queued' | 'retrying' | 'delivered' | 'failed' | 'dropped' | 'abandoned';

/** One write to the delivery log: the row for (receiver, transition) as it stands now (created or replaced). */
export interface DeliveryEntry {
  receiver: string;
  transitionId: string;
  fingerprint: string;
  rule: string;
  from: string;
  to: string;
  state: DeliveryState;
  attempts: number;
  /** HTTP status of the last attempt, when one came back. */
  lastStatus?: number | undefined;
  lastError?: string | undefined;
  nextAttemptAtMs?: number | undefined;
  /** When the notification was queued (the row's creation time). */
  queuedAtMs: number;
  /** When this state was reached. */
  atMs: number;
  /** What is sent (every attempt the same bytes): kept while the notification is unfinished, to resume it after a restart. */
  body?: string | undefined;
}

/** States a notification may still leave: resumed by the next collector that delivers (see {@link DeliveryLogStore.unfinishedDeliveries}). */
export const UNFINISHED_DELIVERY_STATES = ['queued', 'retrying', 'abandoned'] as const satisfies readonly DeliveryState[];

/** A notification left unfinished by a collector that stopped (or died): what to send again. */
export interface UnfinishedDelivery {
  record: DeliveryRecord;
  body: string;
}

export interface DeliveryRecord extends Omit<DeliveryEntry, 'atMs' | 'queuedAtMs'> {
  createdAtMs: number;
  updatedAtMs: number;
  deliveredAtMs?: number | undefined;
}

export interface DeliveryQuery {
  receiver?: string | undefined;
  state?: DeliveryState | undefined;
  fingerprint?: string | undefined;
  transitionId?: string | undefined;
  limit: number;
}

/**
 * The log of alert notifications: one row per receiver and transition (the idempotency key), rewritten at each
 * attempt. Delivery writes it and never waits on it to send; the query API reads it.
 */
export interface DeliveryLogStore {
  /** Writes the entries at once (one transaction): delivery batches its log writes. */
  recordDeliveries(entries: readonly DeliveryEntry[]): Promise<void>;
  /** Most recently updated first. */
  deliveries(query: DeliveryQuery): Promise<DeliveryRecord[]>;
  /** A receiver's notifications still queued, retrying or abandoned, with their bodies; oldest first, at most `limit`. */
  unfinishedDeliveries(receiver: string, limit: number): Promise<UnfinishedDelivery[]>;
}
