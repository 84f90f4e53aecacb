import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { ConfigError } from '../../model/errors.js';
import { type RetentionConfig, StoreUnavailableError } from '../store.js';
import { DEFAULT_MAX_INSTANCES, DEFAULT_MAX_VALUES_PER_DIMENSION } from '../common/resource-limits.js';
import { FoldSchedule } from '../common/fold-schedule.js';
import { findMigrationsDir, loadMigrations } from '../common/migrations.js';
import { migrate } from './migrate.js';
import { Folder } from './rollup.js';
import { MetricsWriter } from './writer/index.js';

/** SQLite `synchronous` in WAL mode: `normal` survives the process being killed, `full` also power loss. */
export type Synchronous = 'normal' | 'full';

export interface SqliteStoreOptions {
  path: string;
  clock: () => number;
  retention: RetentionConfig;
  synchronous: Synchronous;
  examplesPerCell: number;
  migrationsDir?: string;
  /**
   * Create the file's directory when it is missing (the collector's default location, ./data). Otherwise a missing
   * directory is refused: a mistyped --db must not create directories (as root, anywhere).
   */
  createDirectory?: boolean;
  /** Below this much free space on the database's file system the store says it cannot take writes (readiness). */
  minFreeBytes?: number;
  /** Distinct values kept per sender-controlled dimension (client names, versions, methods, …); the rest is `_OTHER`. */
  maxValuesPerDimension?: number;
  /** Instances (service, instance id) kept; new ones past it are the service's instance `_OTHER`. Service names are bounded by `maxValuesPerDimension`. */
  maxInstances?: number;
  /** How often the store folds between reads (see common/fold-schedule.ts); absent: only before reads, on flush and at close. */
  foldIntervalMs?: number;
  /** Told about problems that do not stop the store: quarantined rows, a fold that failed (reads answer from what is stored). */
  warn?: (message: string) => void;
}

/** Logged increments folded per transaction: a few milliseconds of work between turns of the event loop. */
const FOLD_STEP_ROWS = 1000;

/** SQLite failures that say nothing about the data: the sender should retry later. */
const TRANSIENT = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY|NOMEM)/;

function asTransient(error: unknown): unknown {
  if (error instanceof Database.SqliteError && TRANSIENT.test(error.code)) return new StoreUnavailableError(`database: ${error.message}`);
  return error;
}

/**
 * What every role of the SQLite store shares: one better-sqlite3 connection in WAL mode, held exclusively (a second
 * collector on the same file is refused instead of corrupting the exactly-once bookkeeping); one queue for every
 * write (an export applied in steps keeps its transaction open across turns of the event loop, so nothing else may
 * write meanwhile); the fold of the point log into the rollups, on the store's fold schedule; and what the last
 * write failure was, for readiness.
 */
export class SqliteCore {
  readonly db: Database.Database;
  readonly latestSchemaVersion: number;
  readonly writer: MetricsWriter;
  /** The last write (apply, fold) failed for a reason of the database (disk full, read-only, I/O): until a write succeeds, not ready. */
  writeFailure: string | undefined;
  closed = false;
  /** This open created the database file: a start that fails after it removes the file again. */
  readonly created: boolean;
  /** The outermost directory this open created for the file (with createDirectory), removed with it. */
  readonly createdDirectory: string | undefined;
  readonly fold: FoldSchedule;
  private readonly folder: Folder;
  private writes: Promise<unknown> = Promise.resolve();

  constructor(readonly options: SqliteStoreOptions) {
    const migrations = loadMigrations(options.migrationsDir ?? findMigrationsDir('sqlite'));
    this.latestSchemaVersion = migrations.at(-1)?.version ?? 0;
    const directory = dirname(options.path);
    this.createdDirectory = options.createDirectory === true ? mkdirSync(directory, { recursive: true }) : undefined;
    if (!existsSync(directory))
      throw new ConfigError(`--db ${options.path}: the directory ${directory} does not exist; create it (mkdir -p ${directory}) or give another --db`);
    this.created = !existsSync(options.path);
    // Only this connection ever uses the file (exclusive lock), so waiting for a lock only delays the refusal.
    this.db = new Database(options.path, { timeout: 500 });
    try {
      this.db.pragma('locking_mode = EXCLUSIVE');
      this.db.pragma('journal_mode = WAL');
      // NORMAL in WAL mode: a commit is in the WAL (the OS has it) before we answer, which survives the process
      // being killed; FULL also fsyncs each commit, which survives power loss. See docs/operations.md, "Durability".
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
    this.fold = new FoldSchedule({ foldPending: () => this.foldPending() }, options.warn ?? (() => undefined), options.foldIntervalMs);
  }

  /** Runs `work` once every write before it has finished (writes are not interleaved). */
  exclusive<T>(work: () => T | Promise<T>): Promise<T> {
    const run = this.writes.then(work);
    this.writes = run.catch(() => undefined);
    return run;
  }

  /** A write in the queue: its success clears a remembered failure, its failure is remembered (and made retryable). */
  write<T>(work: () => T): Promise<T> {
    return this.exclusive(() => {
      try {
        const result = work();
        this.writeFailure = undefined;
        return result;
      } catch (error) {
        throw this.failed(error);
      }
    });
  }

  /** A failed write: remembered for readiness when the database is the reason, and made retryable then. */
  failed(error: unknown): unknown {
    const mapped = asTransient(error);
    if (mapped instanceof StoreUnavailableError) this.writeFailure = mapped.message;
    return mapped;
  }

  quarantined(): number {
    try {
      return this.folder.quarantined();
    } catch {
      return 0;
    }
  }

  /**
   * The fold statement, for the store's fold schedule: folds what is pending, up to what was logged when it began,
   * in steps of {@link FOLD_STEP_ROWS} increments, each a transaction of its own between the store's other writes,
   * with a turn of the event loop between them.
   */
  private async foldPending(): Promise<void> {
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
      throw this.failed(error);
    }
    if (quarantined > 0) {
      this.options.warn?.(
        `${quarantined} logged increments are not counts ingest accepts (beyond the per-stream bound, or not whole): quarantined, left out of the rollups`,
      );
    }
  }
}
