import { mkdirSync, statSync, statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import Database from 'better-sqlite3';
import type { Alert } from '../../model/alerts.js';
import type { MetricsBatch, SpanBatch, SpanExample } from '../../model/batches.js';
import type { ApplyResult, CellTotals, ExampleRecord, InstanceCellTotals, InstanceRecord, StepTotal } from '../../model/records.js';
import { MS_PER_DAY, MS_PER_HOUR } from '../../model/time.js';
import { type AlertChanges, type AlertPage, type AlertQuery, type BackupResult, type DeliveryEntry, type DeliveryQuery, type DeliveryRecord, type UnfinishedDelivery, type ExamplesQuery, type InstanceHour, type InstanceHourIds, type InstancesQuery, type Leadership, type RetentionConfig, SOLE_LEADER, type Store, type StoreBackup, type StoreHealth, type StoreStats, StoreUnavailableError } from '../store.js';
import { type CellQuery, type HistoryQuery, type InstanceCellQuery, type StepQuery } from '../common/queries.js';
import type { ClientSlot, DeclarationSlot, ExtensionSlot, RequiredSlot, TrendQuery, TrendResult } from '../common/trends.js';
import { DeliveryLog } from './deliveries.js';
import { AlertsTable } from './alerts.js';
import { findMigrationsDir, loadMigrations } from '../common/migrations.js';
import { migrate, schemaVersion } from './migrate.js';
import { ExamplesReader } from './readers/examples.js';
import { InstancesReader } from './readers/instances.js';
import { RollupsReader } from './readers/rollups.js';
import { TrendsReader } from './readers/trends.js';
import { Retention } from './retention.js';
import { Folder } from './rollup.js';
import { ExamplesWriter } from './writer/examples.js';
import { ExtensionIdLimitTable } from './writer/extension-id-limits.js';
import { APPLY_STEP_POINTS, MetricsWriter } from './writer/index.js';

/** SQLite `synchronous` in WAL mode: `normal` survives the process being killed, `full` also power loss. */
export type Synchronous = 'normal' | 'full';

export interface SqliteStoreOptions {
  path: string;
  clock: () => number;
  retention: RetentionConfig;
  synchronous: Synchronous;
  examplesPerCell: number;
  migrationsDir?: string;
  /** Below this much free space on the database's file system the store says it cannot take writes (readiness). */
  minFreeBytes?: number;
  /** Distinct values kept per sender-controlled dimension (client names, versions, methods, …); the rest is `_OTHER`. */
  maxValuesPerDimension?: number;
  /** Instances (service, instance id) kept; new ones past it are the service's instance `_OTHER`. Service names are bounded by `maxValuesPerDimension`. */
  maxInstances?: number;
  /** Told about problems that do not stop the store: quarantined rows, a fold that failed (reads answer from what is stored). */
  warn?: (message: string) => void;
}

/** Bytes one readiness probe writes after a failed write: about one export's worth of pages. */
const PROBE_BYTES = 256 * 1024;
const DEFAULT_MIN_FREE_BYTES = 1024 * 1024;
/** Logged increments folded per transaction: a few milliseconds of work between turns of the event loop. */
const FOLD_STEP_ROWS = 1000;
const DEFAULT_MAX_VALUES_PER_DIMENSION = 2000;
const DEFAULT_MAX_INSTANCES = 20_000;

/** SQLite failures that say nothing about the data: the sender should retry later. */
const TRANSIENT = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY|NOMEM)/;

function asTransient(error: unknown): unknown {
  if (error instanceof Database.SqliteError && TRANSIENT.test(error.code)) return new StoreUnavailableError(`database: ${error.message}`);
  return error;
}

/** A matrix over more than two days is answered in whole hours (see README, query API). */
const HOURLY_ABOVE_MS = 2 * MS_PER_DAY;

/**
 * The single-node store: better-sqlite3 in WAL mode, one connection, held exclusively (a second collector on
 * the same file is refused instead of corrupting the exactly-once bookkeeping). All work is synchronous; one
 * export is one transaction, and `applyMetrics` resolves after its commit.
 */
export class SqliteStore implements Store, StoreBackup {
  private readonly latestSchemaVersion: number;
  private readonly db: Database.Database;
  private readonly writer: MetricsWriter;
  private readonly folder: Folder;
  private readonly retention: Retention;
  private readonly rollups: RollupsReader;
  private readonly instancesReader: InstancesReader;
  private readonly examplesWriter: ExamplesWriter;
  private readonly idLimits: ExtensionIdLimitTable;
  private readonly examplesReader: ExamplesReader;
  private readonly trendsReader: TrendsReader;
  private readonly deliveryLog: DeliveryLog;
  private readonly deliveriesTransaction: (entries: readonly DeliveryEntry[]) => void;
  private readonly alertsTable: AlertsTable;
  private readonly spansTransaction: (examples: readonly SpanExample[]) => number;
  private readonly probe: Database.Statement;
  private readonly bigProbe: Database.Statement;
  /** The last write (apply, fold) failed for a reason of the database (disk full, read-only, I/O): until a write succeeds, not ready. */
  private writeFailure: string | undefined;
  /** Every write, one after another: an apply keeps its transaction open across turns of the event loop. */
  private writes: Promise<unknown> = Promise.resolve();
  private foldFailures = 0;
  private foldFailed = false;
  private closed = false;
  private closing: Promise<void> | undefined;

  constructor(private readonly options: SqliteStoreOptions) {
    const migrations = loadMigrations(options.migrationsDir ?? findMigrationsDir('sqlite'));
    this.latestSchemaVersion = migrations.at(-1)?.version ?? 0;
    mkdirSync(dirname(options.path), { recursive: true });
    // Only this connection ever uses the file (exclusive lock), so waiting for a lock only delays the refusal.
    this.db = new Database(options.path, { timeout: 500 });
    try {
      this.db.pragma('locking_mode = EXCLUSIVE');
      this.db.pragma('journal_mode = WAL');
      // NORMAL in WAL mode: a commit is in the WAL (the OS has it) before we answer, which survives the process
      // being killed; FULL also fsyncs each commit, which survives power loss. See README, "Durability".
      this.db.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
      this.db.pragma('temp_store = MEMORY');
      this.db.pragma('cache_size = -65536');
      // Take the exclusive lock now, so a second collector on this file fails at start, not at its first write.
      this.db.exec('BEGIN IMMEDIATE; COMMIT');
      migrate(this.db, migrations);
    } catch (error) {
      this.db.close();
      if (error instanceof Error && /database is locked/i.test(error.message)) {
        throw new Error(`the database ${options.path} is in use by another process (another collector?)`);
      }
      throw error;
    }
    const maxValues = options.maxValuesPerDimension ?? DEFAULT_MAX_VALUES_PER_DIMENSION;
    this.writer = new MetricsWriter(this.db, options.clock, maxValues, { maxServices: maxValues, maxInstances: options.maxInstances ?? DEFAULT_MAX_INSTANCES });
    this.folder = new Folder(this.db);
    this.retention = new Retention(
      this.db,
      options.clock,
      options.retention,
      (what) => (what === 'instances' ? this.writer.forget() : this.writer.recountState()),
      (work) => this.exclusive(work),
    );
    this.rollups = new RollupsReader(this.db, () => ({
      minuteHorizonMs: options.clock() - options.retention.minuteDays * MS_PER_DAY + MS_PER_HOUR,
      hourlyAboveMs: HOURLY_ABOVE_MS,
      nowMs: options.clock(),
    }));
    this.instancesReader = new InstancesReader(this.db);
    this.examplesWriter = new ExamplesWriter(this.db, options.examplesPerCell);
    this.idLimits = new ExtensionIdLimitTable(this.db);
    this.examplesReader = new ExamplesReader(this.db);
    this.trendsReader = new TrendsReader(this.db);
    this.deliveryLog = new DeliveryLog(this.db);
    this.deliveriesTransaction = this.db.transaction((entries: readonly DeliveryEntry[]) => {
      for (const entry of entries) this.deliveryLog.record(entry);
    });
    this.alertsTable = new AlertsTable(this.db);
    this.spansTransaction = this.db.transaction((examples: readonly SpanExample[]) => this.examplesWriter.write(examples));
    this.probe = this.db.prepare("INSERT INTO meta (key, value) VALUES ('ready_probe', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value");
    this.bigProbe = this.db.prepare("INSERT INTO meta (key, value) VALUES ('ready_probe', zeroblob(?)) ON CONFLICT (key) DO UPDATE SET value = excluded.value");
  }

  /** True when accepted exports may not be visible to reads yet (the last fold failed; reads answer from what is stored). */
  behind(): boolean {
    return this.writer.pendingRows && this.foldFailed;
  }

  /**
   * One transaction, applied in steps with a turn of the event loop between them (a large export would
   * otherwise hold up every other request); other writes wait for it. Reads in the meantime see the rows it has
   * added so far but none of its counts: those become visible through the fold, which is a write too.
   */
  applyMetrics(batch: MetricsBatch): Promise<ApplyResult> {
    // A small export is applied in one go, as before: yielding would only keep it in flight longer.
    const large = batch.resources.reduce((sum, resource) => sum + resource.counters.length + resource.advertised.length + resource.advertisedCounts.length, 0) > APPLY_STEP_POINTS;
    return this.exclusive(async () => {
      // A large batch arrives straight from normalisation's last step: its first step starts a turn of its own.
      if (large) await yieldToEventLoop();
      this.db.exec('BEGIN');
      try {
        const steps = this.writer.apply(batch);
        let step = steps.next();
        while (step.done !== true) {
          await yieldToEventLoop();
          step = steps.next();
        }
        // The commit of a large batch has a turn of its own: SQLite may checkpoint the write-ahead log in it.
        if (large) await yieldToEventLoop();
        this.db.exec('COMMIT');
        // Nothing else writes until this resolves, so the caches may catch up over several turns.
        const caches = this.writer.commit();
        while (caches.next().done !== true) if (large) await yieldToEventLoop();
        this.writeFailure = undefined;
        return step.value;
      } catch (error) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        this.writer.rollback();
        throw this.failed(error);
      }
    });
  }

  applySpans(batch: SpanBatch): Promise<number> {
    if (batch.examples.length === 0) return Promise.resolve(0);
    return this.exclusive(() => {
      try {
        const stored = this.spansTransaction(batch.examples);
        this.writeFailure = undefined;
        return stored;
      } catch (error) {
        throw this.failed(error);
      }
    });
  }

  async admittedIds(keys: readonly InstanceHour[]): Promise<InstanceHourIds[]> {
    return this.idLimits.read(keys);
  }

  admitIds(entries: readonly InstanceHourIds[]): Promise<void> {
    if (entries.length === 0) return Promise.resolve();
    return this.exclusive(() => {
      try {
        this.idLimits.write(entries);
        this.writeFailure = undefined;
      } catch (error) {
        throw this.failed(error);
      }
    });
  }

  async cellTotals(query: CellQuery): Promise<CellTotals> {
    await this.foldBeforeRead();
    return this.rollups.cellTotals(query);
  }

  async instanceCellTotals(query: InstanceCellQuery): Promise<InstanceCellTotals> {
    await this.foldBeforeRead();
    return this.rollups.instanceCellTotals(query);
  }

  async stepTotals(query: StepQuery): Promise<StepTotal[]> {
    await this.foldBeforeRead();
    return this.rollups.stepTotals(query);
  }

  async serverUnknownStepTotals(query: StepQuery): Promise<StepTotal[]> {
    // Awaited like every read: the request totals beside these are read after their fold, so these must be too.
    await this.foldBeforeRead();
    return this.rollups.serverUnknownStepTotals(query);
  }

  async declarationTrend(query: TrendQuery): Promise<TrendResult<DeclarationSlot>> {
    await this.foldBeforeRead();
    return this.trendsReader.declarations(query);
  }

  async clientTrend(query: TrendQuery): Promise<TrendResult<ClientSlot>> {
    await this.foldBeforeRead();
    return this.trendsReader.clients(query);
  }

  async extensionTrend(query: TrendQuery): Promise<TrendResult<ExtensionSlot>> {
    await this.foldBeforeRead();
    return this.trendsReader.extensions(query);
  }

  async requiredTrend(query: TrendQuery): Promise<TrendResult<RequiredSlot>> {
    await this.foldBeforeRead();
    return this.trendsReader.required(query);
  }

  async historyStart(query: HistoryQuery): Promise<number | null> {
    await this.foldBeforeRead();
    return this.rollups.historyStart(query);
  }

  async instances(query: InstancesQuery): Promise<InstanceRecord[]> {
    return this.instancesReader.read(query);
  }

  async examples(query: ExamplesQuery): Promise<ExampleRecord[]> {
    return this.examplesReader.read(query);
  }

  async activeAlerts(): Promise<Alert[]> {
    return this.alertsTable.activeAlerts();
  }

  recordAlerts(changes: AlertChanges): Promise<void> {
    // Between the store's other writes: an export applied in steps holds one transaction open across turns.
    return this.exclusive(() => {
      try {
        this.alertsTable.record(changes);
      } catch (error) {
        throw this.failed(error);
      }
    });
  }

  async alerts(query: AlertQuery): Promise<AlertPage> {
    return this.alertsTable.page(query);
  }

  pruneAlerts(resolvedBeforeMs: number): Promise<number> {
    return this.exclusive(() => this.alertsTable.prune(resolvedBeforeMs));
  }

  recordDeliveries(entries: readonly DeliveryEntry[]): Promise<void> {
    if (this.closed || entries.length === 0) return Promise.resolve();
    // Between the store's other writes: an export applied in steps holds one transaction open across turns.
    return this.exclusive(() => this.deliveriesTransaction(entries));
  }

  async deliveries(query: DeliveryQuery): Promise<DeliveryRecord[]> {
    return this.deliveryLog.read(query);
  }

  async unfinishedDeliveries(receiver: string, limit: number): Promise<UnfinishedDelivery[]> {
    return this.deliveryLog.readUnfinished(receiver, limit);
  }

  health(): Promise<StoreHealth> {
    return this.exclusive(() => this.probeHealth());
  }

  private probeHealth(): StoreHealth {
    const health: StoreHealth = { writable: false, schemaVersion: 0, latestSchemaVersion: this.latestSchemaVersion };
    try {
      health.schemaVersion = schemaVersion(this.db);
      const free = this.freeBytes();
      const minFree = this.options.minFreeBytes ?? DEFAULT_MIN_FREE_BYTES;
      if (free !== undefined && free < minFree) throw new Error(`${free} bytes free on the database's file system, less than ${minFree}`);
      if (this.writeFailure === undefined) this.probe.run(String(this.options.clock()));
      else {
        // A write failed: ready again only once a write of about an export's size commits.
        this.bigProbe.run(PROBE_BYTES);
        this.probe.run(String(this.options.clock()));
        this.writeFailure = undefined;
      }
      health.writable = true;
    } catch (error) {
      health.error = this.writeFailure ?? (error as Error).message;
    }
    return health;
  }

  async sizeBytes(): Promise<number> {
    let total = 0;
    for (const suffix of ['', '-wal']) {
      try {
        total += statSync(`${this.options.path}${suffix}`).size;
      } catch {
        // A WAL that does not exist (yet) weighs nothing.
      }
    }
    return total;
  }

  async stats(): Promise<StoreStats> {
    return { cumulativeStreams: this.writer.cumulativeStreams, quarantinedPoints: this.quarantined(), foldFailures: this.foldFailures, overflowedValues: this.writer.overflowedValues, overflowedInstances: this.writer.overflowedInstances };
  }

  flush(): Promise<void> {
    return this.foldPending(true);
  }

  async maintain(): Promise<void> {
    await this.flush();
    // The delivery log is kept as long as the hourly rollups: it explains alerts of that whole range.
    await this.exclusive(() => this.deliveryLog.dropBefore(this.options.clock() - this.options.retention.hourDays * MS_PER_DAY));
    await this.retention.run();
    await this.pruneAlerts(this.options.clock() - this.options.retention.hourDays * MS_PER_DAY);
  }

  /**
   * SQLite's online backup API, run on this store's own connection (the exclusive lock keeps every other
   * connection out): it copies the pages a few at a time between exports, and SQLite updates the copy when this
   * connection writes a page already copied, so the result is the database as it was when the copy completed.
   * The copy is then switched to a rollback journal, so that it is one self-contained file.
   */
  async backup(destination: string): Promise<BackupResult> {
    if (this.closed) throw new StoreUnavailableError('the store is closed');
    await this.foldPending();
    // Between exports: an export applied in steps keeps its transaction open across turns, and the copy must
    // not take its uncommitted pages.
    await this.exclusive(() => this.db.backup(destination));
    const copy = new Database(destination, { fileMustExist: true });
    try {
      copy.pragma('journal_mode = DELETE');
      return { bytes: statSync(destination).size, schemaVersion: schemaVersion(copy) };
    } finally {
      copy.close();
    }
  }

  /** The file is held exclusively: this collector is the only one, and runs every job. */
  leadership(): Leadership {
    return SOLE_LEADER;
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.retention.stop();
      // What cannot be folded or checkpointed now (disk full, read-only) is folded at the next start.
      await this.foldPending();
      // After every write already queued.
      await this.exclusive(() => {
        this.closed = true;
        try {
          this.db.pragma('wal_checkpoint(TRUNCATE)');
        } catch (error) {
          this.options.warn?.(`closing: the write-ahead log could not be checkpointed (${(error as Error).message}); it is at the next start`);
        }
        this.db.close();
      });
    })();
    return this.closing;
  }

  /** Runs `work` once every write before it has finished (writes are not interleaved). */
  private exclusive<T>(work: () => T | Promise<T>): Promise<T> {
    const run = this.writes.then(work);
    this.writes = run.catch(() => undefined);
    return run;
  }

  /** Reads see every batch whose apply has resolved: what is pending is folded first (after any write in progress). */
  private foldBeforeRead(): Promise<void> {
    return this.foldPending();
  }

  /**
   * Folds what is pending, up to what was logged when it began, in steps of {@link FOLD_STEP_ROWS} increments,
   * each a transaction of its own between the store's other writes, with a turn of the event loop between them.
   * A failure does not fail the read that asked for it: the read answers from what is stored (and says it may be
   * behind, see {@link behind}); `rethrow` is for the background fold, which logs it.
   */
  private async foldPending(rethrow = false): Promise<void> {
    if (!this.writer.pendingRows || this.closed) return;
    let quarantined = 0;
    try {
      const target = await this.exclusive(() => this.folder.newest());
      for (;;) {
        const done = await this.exclusive(() => {
          if (this.closed) return true;
          const step = this.folder.foldStep(target, FOLD_STEP_ROWS);
          quarantined += step.quarantined;
          // Nothing logged since the fold began: nothing pending any more.
          if (step.done && this.folder.newest() <= target) this.writer.folded();
          return step.done;
        });
        if (done) break;
        await yieldToEventLoop();
      }
    } catch (error) {
      this.foldFailures++;
      this.foldFailed = true;
      const failure = this.failed(error);
      if (rethrow) throw failure;
      this.options.warn?.(`folding pending increments failed (${(error as Error).message}); reads answer from what is stored`);
      return;
    }
    this.foldFailed = false;
    if (quarantined > 0) {
      this.options.warn?.(`${quarantined} logged increments are not counts ingest accepts (beyond the per-stream bound, or not whole): quarantined, left out of the rollups`);
    }
  }

  private quarantined(): number {
    try {
      return this.folder.quarantined();
    } catch {
      return 0;
    }
  }

  private freeBytes(): number | undefined {
    try {
      const stats = statfsSync(dirname(this.options.path));
      return stats.bavail * stats.bsize;
    } catch {
      return undefined;
    }
  }

  /** A failed write: remembered for readiness when the database is the reason, and made retryable then. */
  private failed(error: unknown): unknown {
    const mapped = asTransient(error);
    if (mapped instanceof StoreUnavailableError) this.writeFailure = mapped.message;
    return mapped;
  }
}
