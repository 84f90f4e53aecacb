import type Database from 'better-sqlite3';
import { type Migration, type MigrationOutcome, migrationPlan } from '../common/migrations.js';

/** Applies, in order and each in its own transaction, the migrations the database has not seen yet. */
export function migrate(db: Database.Database, migrations: readonly Migration[]): MigrationOutcome {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    checksum   TEXT    NOT NULL,
    applied_at TEXT    NOT NULL
  )`);
  const rows = db.prepare('SELECT version, checksum FROM schema_migrations ORDER BY version').all() as { version: number; checksum: string }[];
  const { pending, outcome } = migrationPlan(rows, migrations, 'file');
  const record = db.prepare('INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)');
  for (const migration of pending) {
    db.transaction(() => {
      db.exec(migration.sql);
      record.run(migration.version, migration.name, migration.checksum, new Date().toISOString());
    })();
  }
  return outcome;
}

export function schemaVersion(db: Database.Database): number {
  const row = db.prepare('SELECT MAX(version) AS version FROM schema_migrations').get() as { version: number | null } | undefined;
  return row?.version ?? 0;
}
