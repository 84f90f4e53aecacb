import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SchemaTooNewError } from '../store.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export interface MigrationOutcome {
  version: number;
  applied: number[];
  /** Applied migrations whose file has changed since (forward-only: they are not re-run). */
  changed: number[];
}

const FILE_PATTERN = /^(\d+)_([\w-]+)\.sql$/;

/**
 * `migrations/<backend>/` sits at the package root; this file runs from `collector/store/common/` (sources, under
 * vitest) or `dist/collector/store/common/` (built), so walk up until it is found.
 */
export function findMigrationsDir(backend: 'sqlite' | 'postgres'): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let level = 0; level < 6; level++) {
    const candidate = join(dir, 'migrations', backend);
    if (existsSync(join(candidate, '001_initial.sql'))) return candidate;
    dir = dirname(dir);
  }
  throw new Error(`extscope: cannot find the migrations/${backend}/ directory next to the package`);
}

export function loadMigrations(dir: string): Migration[] {
  const migrations: Migration[] = [];
  for (const file of readdirSync(dir)) {
    const match = FILE_PATTERN.exec(file);
    if (match === null) continue;
    const sql = readFileSync(join(dir, file), 'utf8');
    migrations.push({ version: Number(match[1]), name: match[2] ?? file, sql, checksum: createHash('sha256').update(sql).digest('hex') });
  }
  migrations.sort((a, b) => a.version - b.version);
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(`extscope: migrations must be numbered 1, 2, 3… without gaps (found ${migration.version} at position ${index + 1})`);
    }
  });
  return migrations;
}

/**
 * What a database at `recorded` (its `schema_migrations` rows, in order) needs from `migrations`: the ones to apply,
 * in order, and the applied ones whose file has changed since. A database recorded at a newer version than this
 * build knows is refused. Both backends run migrations by this plan; each applies them its own way.
 */
export function migrationPlan(
  recorded: readonly { version: number; checksum: string }[],
  migrations: readonly Migration[],
  where: string,
): { pending: Migration[]; outcome: MigrationOutcome } {
  const latest = migrations.at(-1)?.version ?? 0;
  const current = recorded.at(-1)?.version ?? 0;
  if (current > latest) {
    throw new SchemaTooNewError(
      `the database is at schema version ${current}, newer than this extscope understands (${latest}). ` +
        `It was written by a newer release: upgrade extscope, or point --db / EXTSCOPE_DB at another ${where}.`,
    );
  }
  const known = new Map(recorded.map((row) => [row.version, row.checksum]));
  const pending = migrations.filter((migration) => !known.has(migration.version));
  const changed = migrations
    .filter((migration) => known.has(migration.version) && known.get(migration.version) !== migration.checksum)
    .map((migration) => migration.version);
  return { pending, outcome: { version: Math.max(current, latest), applied: pending.map((migration) => migration.version), changed } };
}
