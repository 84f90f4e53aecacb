import type pg from 'pg';
import type { RetentionConfig } from '../store.js';
import { DEFAULT_STATEMENT_TIMEOUTS, type StatementTimeouts, createPool } from './connection.js';
import { DEFAULT_MAX_INSTANCES, DEFAULT_MAX_VALUES_PER_DIMENSION } from '../common/resource-limits.js';
import { FoldSchedule } from '../common/fold-schedule.js';
import { PostgresFolder } from './fold.js';
import { AdvisoryLeadership } from './leadership.js';
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
  /** `statement_timeout` and `lock_timeout` of every pooled connection (default {@link DEFAULT_STATEMENT_TIMEOUTS}). */
  timeouts?: StatementTimeouts;
  /** How often each replica folds between reads (see common/fold-schedule.ts); absent: only before reads, on flush and at close. */
  foldIntervalMs?: number;
  warn?: (message: string) => void;
}

const DEFAULT_POOL_SIZE = 10;

/**
 * What every role of the PostgreSQL store shares: the connection pool, the writer's caches (stream and series ids,
 * the dimension limits), the fold of pending increments that every read of the rollups runs first, and the
 * leadership of background jobs among replicas.
 */
export class PostgresCore {
  readonly pool: pg.Pool;
  readonly writer: MetricsWriter;
  readonly fold: FoldSchedule;
  readonly lead: AdvisoryLeadership;
  readonly timeouts: StatementTimeouts;

  constructor(
    readonly options: PostgresStoreOptions,
    readonly latestSchemaVersion: number,
  ) {
    const warn = options.warn ?? (() => undefined);
    this.timeouts = options.timeouts ?? DEFAULT_STATEMENT_TIMEOUTS;
    this.pool = createPool(options.url, options.poolSize ?? DEFAULT_POOL_SIZE, warn, this.timeouts);
    this.writer = new MetricsWriter(
      this.pool,
      options.clock,
      options.maxValuesPerDimension ?? DEFAULT_MAX_VALUES_PER_DIMENSION,
      options.maxInstances ?? DEFAULT_MAX_INSTANCES,
    );
    this.lead = new AdvisoryLeadership(options.url, warn);
    this.fold = new FoldSchedule(new PostgresFolder(this.pool), (message) => warn(`extscope: ${message}`), options.foldIntervalMs);
  }

  /** Several reads that must agree with each other: one snapshot. */
  async snapshot<T>(work: (db: pg.PoolClient) => Promise<T>): Promise<T> {
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

  /** Stops the timer, folds what is left, and closes the leadership's connection and the pool. */
  async close(stopJobs: () => Promise<void>): Promise<void> {
    this.fold.stop();
    await this.fold.fold().catch(() => undefined);
    await stopJobs();
    await this.lead.close();
    await this.pool.end();
  }
}
