import type pg from 'pg';
import { type Migration, type MigrationOutcome, migrationPlan } from '../common/migrations.js';
import type { Queryable } from './connection.js';

/** One key for every extscope replica on this database: migrations run one replica at a time. */
const MIGRATION_LOCK = "hashtextextended('extscope:migrate', 0)";

/**
 * Applies, in order and each in its own transaction, the migrations the database has not seen yet. Replicas
 * starting together wait for each other on a session advisory lock, so each migration runs once and the
 * others find it recorded. A database recorded at a newer version than this build knows is refused.
 */
export async function migrate(client: pg.ClientBase, migrations: readonly Migration[]): Promise<MigrationOutcome> {
  await client.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`);
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    integer PRIMARY KEY,
      name       text    NOT NULL,
      checksum   text    NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const { rows } = await client.query<{ version: number; checksum: string }>('SELECT version, checksum FROM schema_migrations ORDER BY version');
    const { pending, outcome } = migrationPlan(rows, migrations, 'database');
    for (const migration of pending) {
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
          migration.version,
          migration.name,
          migration.checksum,
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    }
    return outcome;
  } finally {
    await client.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => undefined);
  }
}

export async function schemaVersion(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ version: number | null }>('SELECT max(version) AS version FROM schema_migrations');
  return rows[0]?.version ?? 0;
}
