import type { StoreRoles } from '../store.js';
import { AlertsTable } from './alerts.js';
import { SqliteCore, type SqliteStoreOptions } from './core.js';
import { DeliveryLog } from './deliveries.js';
import { SqliteIngest } from './ingest.js';
import { SqliteLifecycle } from './lifecycle.js';
import { sqliteReader } from './reader.js';
import { ExtensionIdLimitTable } from './writer/extension-id-limits.js';

export type { SqliteStoreOptions, Synchronous } from './core.js';

/**
 * The single-node store: better-sqlite3 in WAL mode, one connection held exclusively (core.ts). All work is
 * synchronous; one export is one transaction, and `applyMetrics` resolves after its commit. Each role is its own
 * object over the shared core.
 */
export function openSqliteStore(options: SqliteStoreOptions): StoreRoles {
  const core = new SqliteCore(options);
  const alerts = new AlertsTable(core);
  const deliveries = new DeliveryLog(core);
  const lifecycle = new SqliteLifecycle(core, deliveries, alerts);
  return {
    ingest: new SqliteIngest(core),
    reader: sqliteReader(core),
    idLimits: new ExtensionIdLimitTable(core),
    alerts,
    deliveries,
    lifecycle,
    backup: lifecycle,
  };
}
