import type pg from 'pg';
import type { MetricsBatch, SpanBatch } from '../../model/batches.js';
import type { ApplyResult, CellTotals, ExampleRecord, InstanceCellTotals, InstanceRecord, StepTotal } from '../../model/records.js';
import { MS_PER_DAY, MS_PER_HOUR } from '../../model/time.js';
import type { Alert } from '../../model/alerts.js';
import type { AlertChanges, AlertPage, AlertQuery, DeliveryEntry, DeliveryQuery, DeliveryRecord, ExamplesQuery, InstanceHour, InstanceHourIds, InstancesQuery, Leadership, RetentionConfig, Store, StoreHealth, StoreStats, UnfinishedDelivery } from '../store.js';
import type { CellQuery, HistoryQuery, InstanceCellQuery, StepQuery } from '../common/queries.js';
import type { ClientSlot, DeclarationSlot, ExtensionSlot, RequiredSlot, TrendQuery, TrendResult } from '../common/trends.js';
import { AlertsTable } from './alerts.js';
import { asStoreError, createClient, createPool, inTransaction, redactUrl } from './connection.js';
import { DeliveryLog } from './deliveries.js';
import { ExtensionIdLimitTable } from './extension-id-limits.js';
import { AdvisoryLeadership } from './leadership.js';
import { findMigrationsDir, loadMigrations } from '../common/migrations.js';
import { migrate, schemaVersion } from './migrate.js';
import { readExamples } from './readers/examples.js';
import { readInstances } from './readers/instances.js';
import { RollupsReader } from './readers/rollups.js';
import { TrendsReader } from './readers/trends.js';
import { PendingFold } from './fold.js';
import { Retention } from './retention.js';
import { ExamplesWriter } from './writer/examples.js';
import { MetricsWriter } from './writer/index.js';

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database?sslmode=…`; what it leaves out comes from the `PG*` variables. */
  url: string;
  clock: () => number;
  retention: RetentionConfig;
  examplesPerCell: number;
  migrationsDir?: string;
  /** Connections this collector opens at most (plus one for leadership). */
  poolSize?: number;
  /** Distinct values kept per sender-controlled dimension (client names, versions, methods, …); the rest is `_OTHER`. */
  maxValuesPerDimension?: number;
  /** Instances (service, instance id) kept; a new one past it is stored as the service's instance `_OTHER`. */
  maxInstances?: number;
  warn?: (message: string) => void;
}

const DEFAULT_POOL_SIZE = 10;
const DEFAULT_MAX_VALUES_PER_DIMENSION = 2000;
const DEFAULT_MAX_INSTANCES = 20_000;
/** A matrix over more than two days is answered in whole hours (as the SQLite store). */
const HOURLY_ABOVE_MS = 2 * MS_PER_DAY;
/** How often each replica folds between reads. */
const FOLD_INTERVAL_MS = 1000;

/**
 * The store for several collector replicas on one PostgreSQL database. Every export is one transaction that
 * converts, deduplicates and adds to the rollups under row locks (see writer/index.ts), and `applyMetrics`
 * resolves after its commit; there is no fold and no cache, so every replica reads the same totals as soon as
 * any of them acknowledged an export. Background work runs under {@link leadership}.
 */
export class PostgresStore implements Store {
  private readonly writer: MetricsWriter;
  private readonly examplesWriter: ExamplesWriter;
  private readonly rollups: RollupsReader;
  private readonly trendsReader: TrendsReader;
  private readonly retention: Retention;
  private readonly fold: PendingFold;
  private readonly foldTimer: NodeJS.Timeout;
  private readonly lead: AdvisoryLeadership;
  private readonly idLimits: ExtensionIdLimitTable;
  private readonly alertsTable: AlertsTable;
  private readonly deliveryLog: DeliveryLog;
  private closing: Promise<void> | undefined;

  /** Connects, migrates (one replica at a time) and returns the store; a database of a newer schema is refused. */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const migrations = loadMigrations(options.migrationsDir ?? findMigrationsDir('postgres'));
    const client = createClient(options.url);
    try {
      await client.connect();
      await migrate(client, migrations);
    } catch (error) {
      throw describeOpenFailure(error, options.url);
    } finally {
      await client.end().catch(() => undefined);
    }
    return new PostgresStore(options, migrations.at(-1)?.version ?? 0);
  }

  private readonly pool: pg.Pool;

  private constructor(
    private readonly options: PostgresStoreOptions,
    private readonly latestSchemaVersion: number,
  ) {
    const warn = options.warn ?? (() => undefined);
    this.pool = createPool(options.url, options.poolSize ?? DEFAULT_POOL_SIZE, warn);
    this.writer = new MetricsWriter(options.clock, options.maxValuesPerDimension ?? DEFAULT_MAX_VALUES_PER_DIMENSION, options.maxInstances ?? DEFAULT_MAX_INSTANCES);
    this.idLimits = new ExtensionIdLimitTable(this.pool);
    this.alertsTable = new AlertsTable(this.pool);
    this.deliveryLog = new DeliveryLog(this.pool);
    this.examplesWriter = new ExamplesWriter(options.examplesPerCell);
    this.rollups = new RollupsReader(this.pool, () => ({
      minuteHorizonMs: options.clock() - options.retention.minuteDays * MS_PER_DAY + MS_PER_HOUR,
      hourlyAboveMs: HOURLY_ABOVE_MS,
    }));
    this.trendsReader = new TrendsReader(this.pool);
    this.retention = new Retention(this.pool, options.clock, options.retention);
    this.lead = new AdvisoryLeadership(options.url, warn);
    this.fold = new PendingFold(this.pool);
    // Between reads too, so that the pending rows stay few: every replica tries, and skips its turn while another
    // one folds (reads wait for it instead).
    this.foldTimer = setInterval(() => {
      this.fold.background().catch((error: unknown) => warn(`extscope: folding pending increments failed (reads answer from what is folded; retried): ${(asStoreError(error) as Error).message}`));
    }, FOLD_INTERVAL_MS);
    this.foldTimer.unref();
  }

  /** True when accepted exports may not be visible to reads yet: the last fold failed (reads answer from what is folded). */
  behind(): boolean {
    return this.fold.failed;
  }

  applyMetrics(batch: MetricsBatch): Promise<ApplyResult> {
    return inTransaction(this.pool, (db) => this.writer.apply(db, batch));
  }

  async applySpans(batch: SpanBatch): Promise<number> {
    if (batch.examples.length === 0) return 0;
    return inTransaction(this.pool, (db) => this.examplesWriter.write(db, batch.examples));
  }

  admittedIds(keys: readonly InstanceHour[]): Promise<InstanceHourIds[]> {
    return this.read(() => this.idLimits.read(keys));
  }

  admitIds(entries: readonly InstanceHourIds[]): Promise<void> {
    return this.read(() => this.idLimits.write(entries));
  }

  /** Every replica asks the database: the room left in a set is shared (extension-id-limits.ts). */
  admitIdsWithin(entries: readonly InstanceHourIds[], max: number): Promise<InstanceHourIds[]> {
    return this.read(() => this.idLimits.admitWithin(entries, max));
  }

  activeAlerts(): Promise<Alert[]> {
    return this.read(() => this.alertsTable.activeAlerts());
  }

  recordAlerts(changes: AlertChanges): Promise<void> {
    return this.read(() => this.alertsTable.record(changes));
  }

  alerts(query: AlertQuery): Promise<AlertPage> {
    return this.read(() => this.alertsTable.page(query));
  }

  pruneAlerts(resolvedBeforeMs: number): Promise<number> {
    return this.read(() => this.alertsTable.prune(resolvedBeforeMs));
  }

  recordDeliveries(entries: readonly DeliveryEntry[]): Promise<void> {
    return this.read(() => this.deliveryLog.record(entries));
  }

  deliveries(query: DeliveryQuery): Promise<DeliveryRecord[]> {
    return this.read(() => this.deliveryLog.read(query));
  }

  unfinishedDeliveries(receiver: string, limit: number): Promise<UnfinishedDelivery[]> {
    return this.read(() => this.deliveryLog.readUnfinished(receiver, limit));
  }

  cellTotals(query: CellQuery): Promise<CellTotals> {
    return this.readFolded(() => this.rollups.cellTotals(query));
  }

  instanceCellTotals(query: InstanceCellQuery): Promise<InstanceCellTotals> {
    return this.readFolded(() => this.rollups.instanceCellTotals(query));
  }

  stepTotals(query: StepQuery): Promise<StepTotal[]> {
    return this.readFolded(() => this.rollups.stepTotals(query));
  }

  serverUnknownStepTotals(query: StepQuery): Promise<StepTotal[]> {
    return this.readFolded(() => this.rollups.serverUnknownStepTotals(query));
  }

  declarationTrend(query: TrendQuery): Promise<TrendResult<DeclarationSlot>> {
    return this.readFolded(() => this.trendsReader.declarations(query));
  }

  clientTrend(query: TrendQuery): Promise<TrendResult<ClientSlot>> {
    return this.readFolded(() => this.trendsReader.clients(query));
  }

  extensionTrend(query: TrendQuery): Promise<TrendResult<ExtensionSlot>> {
    return this.readFolded(() => this.trendsReader.extensions(query));
  }

  requiredTrend(query: TrendQuery): Promise<TrendResult<RequiredSlot>> {
    return this.readFolded(() => this.trendsReader.required(query));
  }

  historyStart(query: HistoryQuery): Promise<number | null> {
    return this.readFolded(() => this.rollups.historyStart(query));
  }

  instances(query: InstancesQuery): Promise<InstanceRecord[]> {
    return this.read(() => this.snapshot((db) => readInstances(db, query)));
  }

  examples(query: ExamplesQuery): Promise<ExampleRecord[]> {
    return this.read(() => readExamples(this.pool, query));
  }

  async health(): Promise<StoreHealth> {
    const health: StoreHealth = { writable: false, schemaVersion: 0, latestSchemaVersion: this.latestSchemaVersion };
    try {
      health.schemaVersion = await schemaVersion(this.pool);
      // A write, as an export would make one: false on a read-only standby, a full disk, a lost connection.
      await this.pool.query("INSERT INTO meta (key, value) VALUES ('ready_probe', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [String(this.options.clock())]);
      health.writable = true;
    } catch (error) {
      health.error = (asStoreError(error) as Error).message;
    }
    return health;
  }

  /** The extscope tables of this schema, indexes and TOAST included. */
  async sizeBytes(): Promise<number> {
    const { rows } = await this.pool.query<{ bytes: number }>(
      `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = current_schema() AND c.relkind = 'r'`,
    );
    return rows[0]?.bytes ?? 0;
  }

  async stats(): Promise<StoreStats> {
    const { rows } = await this.read(() =>
      this.pool.query<{ streams: number; quarantined: string | null }>(
        "SELECT (SELECT count(*) FROM cumulative_state)::bigint AS streams, (SELECT value FROM meta WHERE key = 'quarantined_points') AS quarantined",
      ),
    );
    // Nothing is quarantined here (ingest lets in only what the fold can add); a count copied from an SQLite database is still reported.
    return { cumulativeStreams: rows[0]?.streams ?? 0, quarantinedPoints: Number(rows[0]?.quarantined ?? 0), foldFailures: this.fold.failures, overflowedValues: this.writer.overflowedValues, overflowedInstances: this.writer.overflowedInstances };
  }

  /** Everything acknowledged so far into the rollups. */
  flush(): Promise<void> {
    return this.read(() => this.fold.run());
  }

  maintain(): Promise<void> {
    return this.retention.run();
  }

  leadership(): Leadership {
    return this.lead;
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.foldTimer);
      await this.fold.run().catch(() => undefined);
      await this.retention.stop();
      await this.lead.close();
      await this.pool.end();
    })();
    return this.closing;
  }

  /**
   * A read of the rollups: the increments acknowledged by any replica until now are folded first. A fold that
   * fails does not fail the read: it answers from what is folded, and {@link behind} says so.
   */
  private async readFolded<T>(work: () => Promise<T>): Promise<T> {
    await this.fold.run().catch(() => undefined);
    return this.read(work);
  }

  private async read<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw asStoreError(error);
    }
  }

  /** Several reads that must agree with each other: one snapshot. */
  private async snapshot<T>(work: (db: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const result = await work(client);
      await client.query('COMMIT');
      client.release();
      return result;
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
  }
}

/** A failure to connect or migrate, with the URL (password redacted) so that the operator sees which database. */
function describeOpenFailure(error: unknown, url: string): unknown {
  if (!(error instanceof Error) || error.name === 'SchemaTooNewError') return error;
  const mapped = asStoreError(error) as Error;
  mapped.message = `${redactUrl(url)}: ${mapped.message}`;
  return mapped;
}
