import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type Database from 'better-sqlite3';
import { SchemaTooNewError } from '../store.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

const FILE_PATTERN = /^(\d+)_([\w-]+)\.sql$/;

/**
 * `migrations/<backend>/` sits at the package root; this file runs from `collector/store/sqlite/` (sources,
 * under vitest) or `dist/collector/store/sqlite/` (built), so walk up until it is found.
 */
export function findMigrationsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let level = 0; level < 6; level++) {
    const candidate = join(dir, 'migrations', 'sqlite');
    if (existsSync(join(candidate, '001_initial.sql'))) return candidate;
    dir = dirname(dir);
  }
  throw new Error('extscope: cannot find the migrations/sqlite/ directory next to the package');
}

export function loadMigrations(dir: string): Migration[] {
  const migrations: Migration[] = [];
  for (const file of readdirSync(dir)) {
    const match = FILE_PATTERN.exec(file);
    if (match === null) continue;
    const sql = readFileSync(join(dir, file), 'utf8');
    migrations.push({
      version: Number(match[1]),
      name: match[2] ?? file,
      sql,
      checksum: createHash('sha256').update(sql).digest('hex'),
    });
  }
  migrations.sort((a, b) => a.version - b.version);
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(`extscope: migrations must be numbered 1, 2, 3… without gaps (found ${migration.version} at position ${index + 1})`);
    }
  });
  return migrations;
}

export interface MigrationOutcome {
  version: number;
  applied: number[];
  /** Applied migrations whose file has changed since (forward-only: they are not re-run). */
  changed: number[];
}

/** Applies, in order and each in its own transaction, the migrations the database has not seen yet. */
export function migrate(db: Database.Database, migrations: readonly Migration[]): MigrationOutcome {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    checksum   TEXT    NOT NULL,
    applied_at TEXT    NOT NULL
  )`);
  const rows = db.prepare('SELECT version, checksum FROM schema_migrations ORDER BY version').all() as { version: number; checksum: string }[];
  const latest = migrations.at(-1)?.version ?? 0;
  const current = rows.at(-1)?.version ?? 0;
  if (current > latest) {
    throw new SchemaTooNewError(
      `the database is at schema version ${current}, newer than this extscope understands (${latest}). ` +
        'It was written by a newer release: upgrade extscope, or point --db / EXTSCOPE_DB at another file.',
    );
  }
  const known = new Map(rows.map((row) => [row.version, row.checksum]));
  const changed = migrations.filter((m) => known.has(m.version) && known.get(m.version) !== m.checksum).map((m) => m.version);
  const record = db.prepare('INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)');
  const applied: number[] = [];
  for (const migration of migrations) {
    if (known.has(migration.version)) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      record.run(migration.version, migration.name, migration.checksum, new Date().toISOString());
    })();
    applied.push(migration.version);
  }
  return { version: Math.max(current, latest), applied, changed };
}

export function schemaVersion(db: Database.Database): number {
  const row = db.prepare('SELECT MAX(version) AS version FROM schema_migrations').get() as { version: number | null } | undefined;
  return row?.version ?? 0;
}
