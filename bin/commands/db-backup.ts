/**
 * `extscope db backup PATH`: a consistent copy of the SQLite database, also while the collector runs. A running
 * collector holds the database's exclusive lock, so nothing else can open the file: the command asks the
 * collector (`POST /admin/backup`), which copies with SQLite's online backup API while ingest goes on. When no
 * collector answers, it opens the file itself. Either way the copy is written beside PATH under a temporary
 * name, checked with `PRAGMA integrity_check`, and only then renamed to PATH.
 */
import { createWriteStream, existsSync } from 'node:fs';
import { open, rename, rm, stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { DEFAULT_DB_PATH, DEFAULT_PORT } from '../../collector/config.js';

const USAGE = `Usage: extscope db backup PATH [--url URL] [--db FILE]

Writes a consistent copy of the collector's SQLite database to PATH (which must not exist), checked with
PRAGMA integrity_check. While a collector runs it makes the copy (online, ingest goes on); otherwise the file
is opened directly.

Options:
  --url URL    the running collector (env EXTSCOPE_URL, default http://127.0.0.1:\${EXTSCOPE_PORT:-${DEFAULT_PORT}})
  --db FILE    the database to copy when no collector answers (env EXTSCOPE_DB, default ${DEFAULT_DB_PATH})
  -h, --help   Show this help

Environment: EXTSCOPE_ADMIN_TOKEN, sent as the bearer token (the collector's admin routes require it when it
has any token set).

Restore: stop the collector, move the copy to the database path (remove any FILE-wal and FILE-shm left
beside the old one), start the collector.
`;

class BackupError extends Error {}

/** Whether nothing listens at the URL (so the database file is free to open), as opposed to any other failure. */
function notListening(error: unknown): boolean {
  const code = ((error as { cause?: { code?: string } }).cause ?? (error as { code?: string })).code;
  return code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'EADDRNOTAVAIL';
}

/** Asks the collector for a copy and streams it to `file`; false when no collector listens at `url`. */
async function fromCollector(url: string, file: string, token: string | undefined): Promise<boolean> {
  let response: Response;
  try {
    // A JSON body: the collector refuses admin requests of the content types a web page of another site could send.
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) };
    response = await fetch(new URL('/admin/backup', url), { method: 'POST', headers, body: '{}' });
  } catch (error) {
    if (notListening(error)) return false;
    throw new BackupError(`${url}: ${(error as Error).message}`);
  }
  if (!response.ok || response.body === null) {
    const text = await response.text().catch(() => '');
    let message = text;
    try {
      message = (JSON.parse(text) as { message?: string }).message ?? text;
    } catch {
      // Not JSON: shown as it is.
    }
    throw new BackupError(`${url} answered ${response.status}: ${message.slice(0, 500)}`);
  }
  await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), createWriteStream(file, { flags: 'wx' }));
  return true;
}

/** No collector runs: the file is opened and copied here (a collector holding it elsewhere makes this fail). */
async function fromFile(dbPath: string, file: string): Promise<void> {
  if (!existsSync(dbPath)) throw new BackupError(`no collector answered, and there is no database at ${dbPath} (pass --url or --db)`);
  const db = new Database(dbPath, { fileMustExist: true, timeout: 1000 });
  try {
    await db.backup(file);
  } catch (error) {
    if (/locked|busy/i.test((error as Error).message))
      throw new BackupError(`${dbPath} is in use by a collector that did not answer at the URL; pass its --url`);
    throw error;
  } finally {
    db.close();
  }
  const copy = new Database(file, { fileMustExist: true });
  copy.pragma('journal_mode = DELETE');
  copy.close();
}

/** `PRAGMA integrity_check` and the copy's schema version; flushed to disk before it is renamed into place. */
async function verify(file: string): Promise<{ schemaVersion: number }> {
  const copy = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const problems = (copy.pragma('integrity_check') as { integrity_check: string }[]).map((row) => row.integrity_check);
    if (problems.length !== 1 || problems[0] !== 'ok') throw new BackupError(`the copy failed its integrity check: ${problems.slice(0, 5).join('; ')}`);
    const row = copy.prepare('SELECT max(version) AS version FROM schema_migrations').get() as { version: number | null } | undefined;
    return { schemaVersion: row?.version ?? 0 };
  } finally {
    copy.close();
  }
}

export async function runDbBackup(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: { url: { type: 'string' }, db: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    process.stderr.write(`extscope db backup: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length !== 1) {
    process.stderr.write(`extscope db backup: one PATH expected\n\n${USAGE}`);
    return 2;
  }
  const destination = positionals[0]!;
  const env = process.env;
  const url = values.url ?? (env['EXTSCOPE_URL'] || `http://127.0.0.1:${env['EXTSCOPE_PORT'] || DEFAULT_PORT}`);
  const dbPath = values.db ?? (env['EXTSCOPE_DB'] || DEFAULT_DB_PATH);
  const token = env['EXTSCOPE_ADMIN_TOKEN'] || undefined;
  const partial = `${destination}.partial-${process.pid}`;
  try {
    if (existsSync(destination)) throw new BackupError(`${destination} exists; choose a new path`);
    const online = await fromCollector(url, partial, token);
    if (!online) await fromFile(dbPath, partial);
    const { schemaVersion } = await verify(partial);
    const handle = await open(partial, 'r+');
    await handle.sync();
    await handle.close();
    await rename(partial, destination);
    const { size } = await stat(destination);
    process.stdout.write(
      `${destination}: ${size} bytes, schema version ${schemaVersion}, integrity ok (${online ? `online, from the collector at ${url}` : `from ${dbPath}; no collector at ${url}`})\n`,
    );
    return 0;
  } catch (error) {
    await rm(partial, { force: true });
    // Expected failures in one line; anything else with its stack.
    const text = error instanceof BackupError ? error.message : ((error as Error).stack ?? String(error));
    process.stderr.write(`extscope db backup: ${text}\n`);
    return 1;
  }
}
