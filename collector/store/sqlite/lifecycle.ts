import { readdirSync, rmSync, statSync, statfsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { retentionCutoffs } from '../common/windows.js';
import {
  type AlertStateStore,
  type BackupResult,
  type Leadership,
  SOLE_LEADER,
  type StoreBackup,
  type StoreHealth,
  type StoreLifecycle,
  type StoreStats,
  StoreUnavailableError,
} from '../store.js';
import type { SqliteCore } from './core.js';
import type { DeliveryLog } from './deliveries.js';
import { schemaVersion } from './migrate.js';
import { Retention } from './retention.js';

/** Bytes one readiness probe writes after a failed write: about one export's worth of pages. */
const PROBE_BYTES = 256 * 1024;
const DEFAULT_MIN_FREE_BYTES = 1024 * 1024;

/** What the service runs: readiness, size, the fold and retention, the online backup, and the close. */
export class SqliteLifecycle implements StoreLifecycle, StoreBackup {
  private readonly retention: Retention;
  private readonly probe: Database.Statement;
  private readonly bigProbe: Database.Statement;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly core: SqliteCore,
    private readonly deliveries: DeliveryLog,
    private readonly alerts: AlertStateStore,
  ) {
    const { db, options, writer } = core;
    this.retention = new Retention(
      db,
      options.clock,
      options.retention,
      (what) => (what === 'instances' ? writer.forget() : writer.recountState()),
      (work) => core.exclusive(work),
    );
    this.probe = db.prepare("INSERT INTO meta (key, value) VALUES ('ready_probe', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value");
    this.bigProbe = db.prepare("INSERT INTO meta (key, value) VALUES ('ready_probe', zeroblob(?)) ON CONFLICT (key) DO UPDATE SET value = excluded.value");
  }

  health(): Promise<StoreHealth> {
    return this.core.exclusive(() => this.probeHealth());
  }

  private probeHealth(): StoreHealth {
    const { core } = this;
    const health: StoreHealth = { writable: false, schemaVersion: 0, latestSchemaVersion: core.latestSchemaVersion };
    try {
      health.schemaVersion = schemaVersion(core.db);
      const free = this.freeBytes();
      const minFree = core.options.minFreeBytes ?? DEFAULT_MIN_FREE_BYTES;
      if (free !== undefined && free < minFree) throw new Error(`${free} bytes free on the database's file system, less than ${minFree}`);
      if (core.writeFailure === undefined) this.probe.run(String(core.options.clock()));
      else {
        // A write failed: ready again only once a write of about an export's size commits.
        this.bigProbe.run(PROBE_BYTES);
        this.probe.run(String(core.options.clock()));
        core.writeFailure = undefined;
      }
      health.writable = true;
    } catch (error) {
      health.error = core.writeFailure ?? (error as Error).message;
    }
    return health;
  }

  async sizeBytes(): Promise<number> {
    let total = 0;
    for (const suffix of ['', '-wal']) {
      try {
        total += statSync(`${this.core.options.path}${suffix}`).size;
      } catch {
        // A WAL that does not exist (yet) weighs nothing.
      }
    }
    return total;
  }

  async stats(): Promise<StoreStats> {
    const { writer } = this.core;
    return {
      cumulativeStreams: writer.cumulativeStreams,
      quarantinedPoints: this.core.quarantined(),
      foldFailures: this.core.fold.failures,
      overflowedValues: writer.overflowedValues,
      overflowedInstances: writer.overflowedInstances,
    };
  }

  flush(): Promise<void> {
    return this.core.fold.fold();
  }

  async maintain(): Promise<void> {
    const { clock, retention } = this.core.options;
    await this.flush();
    // The delivery log is kept as long as the hourly rollups: it explains alerts of that whole range.
    await this.core.exclusive(() => this.deliveries.dropBefore(retentionCutoffs(clock(), retention).historyMs));
    await this.retention.run();
    await this.alerts.pruneAlerts(retentionCutoffs(clock(), retention).historyMs);
  }

  /**
   * SQLite's online backup API, run on this store's own connection (the exclusive lock keeps every other
   * connection out): it copies the pages a few at a time between exports, and SQLite updates the copy when this
   * connection writes a page already copied, so the result is the database as it was when the copy completed.
   * The copy is then switched to a rollback journal, so that it is one self-contained file.
   */
  async backup(destination: string): Promise<BackupResult> {
    if (this.core.closed) throw new StoreUnavailableError('the store is closed');
    await this.core.fold.beforeRead();
    // Between exports: an export applied in steps keeps its transaction open across turns, and the copy must
    // not take its uncommitted pages.
    await this.core.exclusive(() => this.core.db.backup(destination));
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
    const { core } = this;
    this.closing ??= (async () => {
      core.fold.stop();
      await this.retention.stop();
      // What cannot be folded or checkpointed now (disk full, read-only) is folded at the next start.
      await core.fold.fold().catch(() => undefined);
      // After every write already queued.
      await core.exclusive(() => {
        core.closed = true;
        try {
          core.db.pragma('wal_checkpoint(TRUNCATE)');
        } catch (error) {
          core.options.warn?.(`closing: the write-ahead log could not be checkpointed (${(error as Error).message}); it is at the next start`);
        }
        core.db.close();
      });
    })();
    return this.closing;
  }

  async discard(): Promise<void> {
    await this.close();
    if (!this.core.created) return;
    const { path } = this.core.options;
    for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true });
    // Only what this open made, and only while nothing else was put there.
    const made = this.core.createdDirectory;
    if (made !== undefined && readdirSync(made, { recursive: true, encoding: 'utf8' }).every((entry) => statSync(join(made, entry)).isDirectory()))
      rmSync(made, { recursive: true });
  }

  private freeBytes(): number | undefined {
    try {
      const stats = statfsSync(dirname(this.core.options.path));
      return stats.bavail * stats.bsize;
    } catch {
      return undefined;
    }
  }
}
