import type { Leadership, StoreHealth, StoreLifecycle, StoreStats } from '../store.js';
import { asStoreError, storeRead } from './connection.js';
import type { PostgresCore } from './core.js';
import { schemaVersion } from './migrate.js';
import { Retention } from './retention.js';

/**
 * The tables an export writes and the fold moves increments into: a replica that cannot take the lock an
 * INSERT or UPDATE takes on each (ROW EXCLUSIVE; held off by an operator's `LOCK TABLE`, a migration, a
 * `VACUUM FULL`) cannot store an export now, and a read of the rollups would wait too.
 */
const INGEST_TABLES = [
  ...['pending_increments', 'point_log', 'streams', 'cumulative_state', 'series', 'cells', 'instances', 'advertised', 'advertised_counts', 'dimension_values'],
  ...['series_minute', 'series_hour', 'cell_minute', 'cell_hour', 'cell_day'],
];

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
    let client;
    try {
      client = await core.pool.connect();
    } catch (error) {
      health.error = (asStoreError(error) as Error).message;
      return health;
    }
    try {
      // /readyz gives up at its own deadline (and says the database did not answer); the check itself waits up to
      // the statement timeout, so that one check at a time, shared by the probes, sees a lock through.
      await client.query('BEGIN');
      await client.query(`SET LOCAL lock_timeout = ${core.timeouts.statementTimeoutMs}`);
      health.schemaVersion = await schemaVersion(client);
      // A write, as an export would make one: false on a read-only standby, a full disk, a lost connection.
      await client.query("INSERT INTO meta (key, value) VALUES ('ready_probe', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [
        String(core.options.clock()),
      ]);
      // And the locks an export and the fold take: a table locked elsewhere holds every export until it is released.
      await client.query(`LOCK TABLE ${INGEST_TABLES.join(', ')} IN ROW EXCLUSIVE MODE`);
      await client.query('COMMIT');
      client.release();
      health.writable = true;
    } catch (error) {
      const broken = await client.query('ROLLBACK').then(
        () => false,
        () => true,
      );
      client.release(broken ? (error as Error) : undefined);
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
    return {
      cumulativeStreams: rows[0]?.streams ?? 0,
      quarantinedPoints: Number(rows[0]?.quarantined ?? 0),
      foldFailures: core.fold.failures,
      overflowedValues: core.writer.overflowedValues,
      overflowedInstances: core.writer.overflowedInstances,
    };
  }

  /** Everything acknowledged so far into the rollups. */
  flush(): Promise<void> {
    return storeRead(() => this.core.fold.fold());
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

  /** The database is the operator's (never created here): closing is all. */
  discard(): Promise<void> {
    return this.close();
  }
}
