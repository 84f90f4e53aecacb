import { ConfigError } from '../model/errors.js';
import { openPostgresStore } from './postgres/index.js';
import { type StatementTimeouts, isPostgresUrl, redactUrl } from './postgres/connection.js';
import { type Synchronous, openSqliteStore } from './sqlite/index.js';
import type { RetentionConfig, StoreRoles } from './store.js';

// What the configuration sets of each backend, named here so that it names no backend itself.
export { DEFAULT_STATEMENT_TIMEOUTS } from './postgres/connection.js';
export type { Synchronous } from './sqlite/index.js';

export interface OpenStoreOptions {
  /** An SQLite file path, or a `postgres://` / `postgresql://` URL. */
  db: string;
  clock: () => number;
  retention: RetentionConfig;
  synchronous: Synchronous;
  examplesPerCell: number;
  minFreeBytes?: number;
  maxValuesPerDimension?: number;
  maxInstances?: number;
  /** How often the store folds between reads (common/fold-schedule.ts); absent: only before reads, on flush and at close. */
  foldIntervalMs?: number;
  /** SQLite only: create the file's directory when missing (see SqliteStoreOptions). */
  createDirectory?: boolean;
  /** PostgreSQL only: `statement_timeout` and `lock_timeout` of the store's connections. */
  timeouts?: StatementTimeouts;
  warn?: (message: string) => void;
}

/** The one place that picks a backend: a PostgreSQL URL opens the PostgreSQL store, anything else is an SQLite file. */
export async function openStore(options: OpenStoreOptions): Promise<StoreRoles> {
  const { db, synchronous, minFreeBytes, createDirectory, timeouts, ...common } = options;
  if (isPostgresUrl(db)) return openPostgresStore({ url: db, timeouts, ...common });
  return openSqliteStore({ path: db, synchronous, minFreeBytes, createDirectory, ...common });
}

/**
 * Refuses a `--db` that no backend would take for what it is: empty, or the URL of another database (`mysql://…`
 * would otherwise be taken for a file path: `mysql:` a directory, `//host/db` a file).
 */
export function checkDbLocation(db: string): void {
  if (db === '') throw new ConfigError('dbPath must not be empty');
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(db.trim())?.[1];
  if (scheme !== undefined && !isPostgresUrl(db)) {
    throw new ConfigError(
      `database ${JSON.stringify(`${scheme}://…`)}: unknown URL scheme ${JSON.stringify(`${scheme}:`)}; give an SQLite file path or a postgres:// URL`,
    );
  }
}

/** `--db` as it may be logged: a PostgreSQL URL without its password. */
export function describeDb(db: string): string {
  return isPostgresUrl(db) ? redactUrl(db) : db;
}
