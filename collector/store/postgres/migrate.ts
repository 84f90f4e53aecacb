import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { SchemaTooNewError } from '../store.js';
import type { Migration, MigrationOutcome } from '../sqlite/migrate.js';
import type { Queryable } from './connection.js';

export { loadMigrations } from '../sqlite/migrate.js';

/** `migrations/postgres/` at the package root, from sources (vitest) or from `dist/`. */
export function findMigrationsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let level = 0; level < 6; level++) {
    const candidate = join(dir, 'migrations', 'postgres');
    if (existsSync(join(candidate, '001_initial.sql'))) return candidate;
    dir = dirname(dir);
  }
  throw new Error('extscope: cannot find the migrations/postgres/ directory next to the package');
}

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
    const latest = migrations.at(-1)?.version ?? 0;
    const current = rows.at(-1)?.version ?? 0;
    if (current > latest) {
      throw new SchemaTooNewError(
        `the database is at schema version ${current}, newer than this extscope understands (${latest}). ` +
          'It was written by a newer release: upgrade extscope, or point --db / EXTSCOPE_DB at another database.',
      );
    }
    const known = new Map(rows.map((row) => [row.version, row.checksum]));
    const changed = migrations.filter((m) => known.has(m.version) && known.get(m.version) !== m.checksum).map((m) => m.version);
    const applied: number[] = [];
    for (const migration of migrations) {
      if (known.has(migration.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [migration.version, migration.name, migration.checksum]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
      applied.push(migration.version);
    }
    return { version: Math.max(current, latest), applied, changed };
  } finally {
    await client.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`).catch(() => undefined);
  }
}

export async function schemaVersion(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ version: number | null }>('SELECT max(version) AS version FROM schema_migrations');
  return rows[0]?.version ?? 0;
}
