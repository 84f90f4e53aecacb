import { NO_ONLINE_BACKUP, type StoreRoles } from '../store.js';
import { AlertsTable } from './alerts.js';
import { asStoreError, createClient, redactUrl } from './connection.js';
import { PostgresCore, type PostgresStoreOptions } from './core.js';
import { DeliveryLog } from './deliveries.js';
import { ExtensionIdLimitTable } from './extension-id-limits.js';
import { PostgresIngest } from './ingest.js';
import { PostgresLifecycle } from './lifecycle.js';
import { findMigrationsDir, loadMigrations } from '../common/migrations.js';
import { migrate } from './migrate.js';
import { postgresReader } from './reader.js';

export type { PostgresStoreOptions } from './core.js';

/**
 * The store for several collector replicas on one PostgreSQL database: connects, migrates (one replica at a time; a
 * database of a newer schema is refused) and hands out the roles over one pool. Every export is one transaction
 * that appends its increments (ingest.ts); reads fold them first, so every replica reads the same totals as soon as
 * any of them acknowledged an export. Background work runs under the lifecycle's leadership.
 */
export async function openPostgresStore(options: PostgresStoreOptions): Promise<StoreRoles> {
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
  const core = new PostgresCore(options, migrations.at(-1)?.version ?? 0);
  return {
    ingest: new PostgresIngest(core),
    reader: postgresReader(core),
    idLimits: new ExtensionIdLimitTable(core.pool),
    alerts: new AlertsTable(core.pool),
    deliveries: new DeliveryLog(core.pool),
    lifecycle: new PostgresLifecycle(core),
    backup: NO_ONLINE_BACKUP,
  };
}

/** A failure to connect or migrate, with the URL (password redacted) so that the operator sees which database. */
function describeOpenFailure(error: unknown, url: string): unknown {
  if (!(error instanceof Error) || error.name === 'SchemaTooNewError') return error;
  const mapped = asStoreError(error) as Error;
  mapped.message = `${redactUrl(url)}: ${mapped.message}`;
  return mapped;
}
