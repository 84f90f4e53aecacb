import { statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { READ_CLOSED_BUCKETS, closedBucketsOf, setClosedGeneration } from './common/closed-buckets.js';
import { openSqliteStore } from './sqlite/index.js';
import { DEFAULT_RETENTION } from './store.js';
import { createClient, redactUrl } from './postgres/connection.js';
import { openPostgresStore } from './postgres/index.js';

/**
 * The tables moved, in an order that keeps every reference valid. `point_log` is copied as the dedup log (the
 * SQLite store folds everything first, so nothing in it is still to be added); `meta` only for the facts that
 * mean the same here (the fold watermark does not): the quarantine counter, and the open hour (every hour before the
 * newest one folded is closed, common/closed-buckets.ts), without which no long-range read on the copy keeps its
 * closed part until the first export after it is folded.
 */
const TABLES = [
  'instances',
  'folded_instances',
  'instance_cells',
  'cells',
  'series',
  'streams',
  'point_log',
  'cumulative_state',
  'series_minute',
  'series_hour',
  'cell_minute',
  'cell_hour',
  'cell_day',
  'instance_cell_minute',
  'instance_cell_hour',
  'instance_cell_day',
  'advertised',
  'advertised_counts',
  'span_examples',
  'dimension_values',
  'extension_id_limits',
  'alerts',
  'alert_transitions',
  'alert_deliveries',
  'meta',
] as const;
const META_KEYS = ['quarantined_points', 'open_hour'];
const IDENTITY_TABLES = ['instances', 'instance_cells', 'cells', 'series', 'streams', 'span_examples', 'alert_deliveries'];
/** PostgreSQL takes at most 65535 parameters per statement. */
const MAX_PARAMETERS = 30_000;

/** A `--from` that is not an extscope database: refused before anything is opened for writing. */
class SourceError extends Error {
  override readonly name = 'SourceError';
}

/**
 * The source must be an extscope SQLite database already: opening a mistyped path as a collector would creates
 * an empty database there (and migrates the target), and the copy then "succeeds" with nothing in it.
 */
function checkSource(from: string): void {
  let stats;
  try {
    stats = statSync(from);
  } catch (error) {
    throw new SourceError(`--from ${from}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
  if (!stats.isFile()) throw new SourceError(`--from ${from}: not a regular file`);
  let db: Database.Database | undefined;
  try {
    db = new Database(from, { readonly: true, fileMustExist: true });
    const migrations = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
    if (migrations === undefined) throw new SourceError(`--from ${from}: not an extscope database (an SQLite file without extscope's tables)`);
  } catch (error) {
    if (error instanceof SourceError) throw error;
    throw new SourceError(`--from ${from}: not an extscope database (${(error as Error).message})`);
  } finally {
    db?.close();
  }
}

export type CopyMode = 'refuse-non-empty' | 'replace';

export interface CopyReport {
  table: string;
  source: number;
  target: number;
}

export class TargetNotEmptyError extends Error {
  override readonly name = 'TargetNotEmptyError';
}

/**
 * Copies an SQLite database into a PostgreSQL database, in one transaction: the same identities, totals,
 * cumulative state and dedup log, so that collectors on PostgreSQL go on exactly where the SQLite collector
 * stopped (a sender's next cumulative point converts against the copied state; a retry of an export the SQLite
 * collector stored is recognised). The SQLite file is first opened as a collector would (migrated to the
 * current schema, pending increments folded), so no collector may be running on it. A target that already holds
 * data is refused, unless `replace` (its extscope tables are emptied first).
 */
export async function copySqliteToPostgres(from: string, to: string, mode: CopyMode, log: (line: string) => void): Promise<CopyReport[]> {
  checkSource(from);
  const { lifecycle: sqlite } = openSqliteStore({ path: from, clock: Date.now, retention: DEFAULT_RETENTION, synchronous: 'full', examplesPerCell: 5 });
  await sqlite.flush();
  await sqlite.close();
  // Migrates the target (under the replicas' lock) and refuses one of a newer schema.
  await (await openPostgresStore({ url: to, clock: Date.now, retention: DEFAULT_RETENTION, examplesPerCell: 5 })).lifecycle.close();

  const source = new Database(from, { readonly: true, fileMustExist: true });
  const target = createClient(to);
  try {
    await target.connect();
    await target.query('BEGIN');
    // No collector may write while the copy runs (and two copies do not interleave).
    await target.query(`LOCK TABLE ${TABLES.join(', ')} IN EXCLUSIVE MODE`);
    const { rows: present } = await target.query<{ name: string }>(
      TABLES.filter((table) => table !== 'meta' && table !== 'dimension_values')
        .map((table) => `SELECT '${table}' AS name FROM ${table} HAVING count(*) > 0`)
        .join(' UNION ALL '),
    );
    if (present.length > 0) {
      if (mode !== 'replace') {
        throw new TargetNotEmptyError(
          `${redactUrl(to)} already holds extscope data (${present.map((row) => row.name).join(', ')}); pass --force to replace it`,
        );
      }
      log(`replacing the data in ${redactUrl(to)}`);
    }
    // A replica that kept closed parts read before the copy must not answer them again: the generation goes on past its own.
    const { rows: before } = await target.query<{ generation: string | null; openHour: string | null }>(READ_CLOSED_BUCKETS);
    await target.query(`TRUNCATE ${TABLES.join(', ')}`);

    const reports: CopyReport[] = [];
    for (const table of TABLES) {
      const targetColumns = (
        await target.query<{ column_name: string }>(
          'SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position',
          [table],
        )
      ).rows.map((row) => row.column_name);
      const sourceColumns = new Set((source.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((column) => column.name));
      const columns = targetColumns.filter((column) => sourceColumns.has(column));
      const where = table === 'meta' ? ` WHERE key IN (${META_KEYS.map((key) => `'${key}'`).join(', ')})` : '';
      const select = source
        .prepare(`SELECT ${columns.join(', ')} FROM ${table}${where}`)
        .raw(true)
        .safeIntegers(true);
      const chunkRows = Math.max(1, Math.floor(MAX_PARAMETERS / columns.length));
      let copied = 0;
      let chunk: unknown[][] = [];
      const flushChunk = async (): Promise<void> => {
        if (chunk.length === 0) return;
        const values = chunk.map((_row, r) => `(${columns.map((_column, c) => `$${r * columns.length + c + 1}`).join(', ')})`).join(', ');
        await target.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${values}`, chunk.flat().map(toParameter));
        copied += chunk.length;
        chunk = [];
      };
      for (const row of select.iterate() as IterableIterator<unknown[]>) {
        chunk.push(row);
        if (chunk.length >= chunkRows) await flushChunk();
      }
      await flushChunk();
      const sourceCount = Number((source.prepare(`SELECT count(*) FROM ${table}${where}`).pluck().get() as number | bigint) ?? 0);
      const { rows } = await target.query<{ n: number }>(`SELECT count(*)::bigint AS n FROM ${table}`);
      reports.push({ table, source: sourceCount, target: rows[0]?.n ?? 0 });
      log(`${table}: ${copied} rows`);
    }
    await target.query(setClosedGeneration(closedBucketsOf(before[0]?.generation, before[0]?.openHour).generation + 1));
    // New rows continue after the copied ids.
    for (const table of IDENTITY_TABLES) {
      await target.query(`SELECT setval(pg_get_serial_sequence('${table}', 'id'), coalesce((SELECT max(id) FROM ${table}), 0) + 1, false)`);
    }
    const mismatched = reports.filter((report) => report.source !== report.target);
    if (mismatched.length > 0)
      throw new Error(`counts differ after the copy: ${mismatched.map((report) => `${report.table} ${report.source} → ${report.target}`).join(', ')}`);
    await target.query('COMMIT');
    return reports;
  } catch (error) {
    await target.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    source.close();
    await target.end().catch(() => undefined);
  }
}

function toParameter(value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
