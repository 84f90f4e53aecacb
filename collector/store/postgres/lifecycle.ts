import type { Leadership, StoreHealth, StoreLifecycle, StoreStats } from '../store.js';
import { asStoreError, storeRead } from './connection.js';
import type { PostgresCore } from './core.js';
import { schemaVersion } from './migrate.js';
import { Retention } from './retention.js';

/** What the service runs: readiness, size, the fold and retention, leadership among replicas, and the close. */
export class PostgresLifecycle implements StoreLifecycle {
  private readonly retention: Retention;
  private closing: Promise<void> | undefined;

  constructor(private readonly core: PostgresCore) {
    this.retention = new Retention(core.pool, core.options.clock, core.options.retention);
  }

  async health(): Promise<StoreHealth> {
    const { core } = this;
    const health: StoreHealth = { writable: false, schemaVersion: 0, latestSchemaVersion: core.latestSchemaVersion };
    try {
      health.schemaVersion = await schemaVersion(core.pool);
      // A write, as an export would make one: false on a read-only standby, a full disk, a lost connection.
      await core.pool.query("INSERT INTO meta (key, value) VALUES ('ready_probe', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [String(core.options.clock())]);
      health.writable = true;
    } catch (error) {
      health.error = (asStoreError(error) as Error).message;
    }
    return health;
  }

  /** The extscope tables of this schema, indexes and TOAST included. */
  async sizeBytes(): Promise<number> {
    const { rows } = await this.core.pool.query<{ bytes: number }>(
      `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = current_schema() AND c.relkind = 'r'`,
    );
    return rows[0]?.bytes ?? 0;
  }

  async stats(): Promise<StoreStats> {
    const { core } = this;
    const { rows } = await storeRead(() =>
      core.pool.query<{ streams: number; quarantined: string | null }>(
        "SELECT (SELECT count(*) FROM cumulative_state)::bigint AS streams, (SELECT value FROM meta WHERE key = 'quarantined_points') AS quarantined",
      ),
    );
    // Nothing is quarantined here (ingest lets in only what the fold can add); a count copied from an SQLite database is still reported.
    return { cumulativeStreams: rows[0]?.streams ?? 0, quarantinedPoints: Number(rows[0]?.quarantined ?? 0), foldFailures: core.fold.failures, overflowedValues: core.writer.overflowedValues, overflowedInstances: core.writer.overflowedInstances };
  }

  /** Everything acknowledged so far into the rollups. */
  flush(): Promise<void> {
    return storeRead(() => this.core.fold.run());
  }

  maintain(): Promise<void> {
    return this.retention.run();
  }

  leadership(): Leadership {
    return this.core.lead;
  }

  close(): Promise<void> {
    this.closing ??= this.core.close(() => this.retention.stop());
    return this.closing;
  }
}
