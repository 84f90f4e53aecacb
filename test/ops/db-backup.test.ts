/**
 * `extscope db backup PATH` against a collector under ingest (online, through POST /admin/backup), against no
 * collector (the file opened directly), and behind tokens. Every copy is restored by starting a collector on it.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningCollector, startCollector } from '../../collector/index.js';
import { type Json, metricsRequest, msToNs, postMetrics, requestPoint } from '../collector/helpers/otlp.js';
import { ROOT } from '../support/processes.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'dist', 'bin', 'extscope.js');
const POINTS_PER_EXPORT = 20;
const COUNT_PER_POINT = 3;
const REQUESTS_PER_EXPORT = POINTS_PER_EXPORT * COUNT_PER_POINT;

let dir: string;
const collectors: RunningCollector[] = [];
afterEach(async () => {
  for (const collector of collectors.splice(0)) await collector.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function collector(dbPath: string, extra: { ingestToken?: string; readToken?: string; adminToken?: string } = {}): Promise<RunningCollector> {
  const running = await startCollector({ dbPath, port: 0, ...extra });
  collectors.push(running);
  return running;
}

/** Export `n`: delta counts of 20 clients, in a window of its own (so no two exports are retries of each other). */
function exportNumber(n: number, baseMs: number): Json {
  const startNs = msToNs(baseMs + n * 10);
  const points = Array.from({ length: POINTS_PER_EXPORT }, (_, index) =>
    requestPoint({
      client: `client-${(n * POINTS_PER_EXPORT + index) % 300}`,
      version: '1.0.0',
      count: COUNT_PER_POINT,
      startNs,
      timeNs: startNs + 5_000_000n,
    }),
  );
  return metricsRequest({ resource: { service: 'shop', instance: 'shop-1' }, requests: points });
}

/** All requests in the matrix, over all time. */
async function totalRequests(url: string, token?: string): Promise<number> {
  const response = await fetch(`${url}/api/v1/matrix?from=2000-01-01T00:00:00Z&limit=5000&extensionLimit=20`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  expect(response.status).toBe(200);
  const matrix = (await response.json()) as { rows: { requests: number }[] };
  return matrix.rows.reduce((sum, row) => sum + row.requests, 0);
}

async function backup(path: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, 'db', 'backup', path, ...args], {
      cwd: dir,
      env: { ...process.env, ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** Integrity, one self-contained file, and the total a collector started on (a copy of) it reports. */
async function restoredTotal(path: string): Promise<number> {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  expect(db.pragma('journal_mode', { simple: true })).toBe('delete');
  db.close();
  expect(existsSync(`${path}-wal`)).toBe(false);
  const restoredPath = join(dir, `restored-${collectors.length}.db`);
  await copyFile(path, restoredPath);
  const restored = await collector(restoredPath);
  return totalRequests(restored.url);
}

describe('extscope db backup', () => {
  it(
    'copies a collector under ingest online: the copy passes integrity_check and holds whole exports, as many as were stored at the time',
    { timeout: 180_000 },
    async () => {
      dir = await mkdtemp(join(tmpdir(), 'extscope-backup-'));
      const live = await collector(join(dir, 'live.db'));
      const baseMs = Date.now() - 60 * 60_000;
      let acknowledged = 0;
      let next = 0;
      const send = async (): Promise<void> => {
        const n = next++;
        const response = await postMetrics(live.url, exportNumber(n, baseMs));
        expect(response.status).toBe(200);
        acknowledged++;
      };
      // Enough stored that the copy takes several steps of SQLite's backup (100 pages each).
      for (let index = 0; index < 300; index++) await send();

      let ingesting = true;
      const ingest = (async () => {
        // Bounded: stops when told, or after 20 000 exports at most.
        while (ingesting && next < 20_000) await send();
      })();
      const before = acknowledged;
      const online = await backup(join(dir, 'online.db'), ['--url', live.url]);
      const after = acknowledged;
      ingesting = false;
      await ingest;

      expect(online.code, online.stderr).toBe(0);
      expect(online.stdout).toMatch(/online.db: \d+ bytes, schema version \d+, integrity ok \(online, from the collector at/);
      // Exports went on while the command ran, so this was a backup under ingest.
      expect(after).toBeGreaterThan(before);
      const copied = await restoredTotal(join(dir, 'online.db'));
      expect(copied % REQUESTS_PER_EXPORT).toBe(0);
      expect(copied).toBeGreaterThanOrEqual(before * REQUESTS_PER_EXPORT);
      expect(copied).toBeLessThanOrEqual(after * REQUESTS_PER_EXPORT);

      // Once ingest has stopped, a copy holds exactly what the collector shows.
      const stored = await totalRequests(live.url);
      expect(stored).toBe(acknowledged * REQUESTS_PER_EXPORT);
      const quiet = await backup(join(dir, 'quiet.db'), ['--url', live.url]);
      expect(quiet.code, quiet.stderr).toBe(0);
      expect(await restoredTotal(join(dir, 'quiet.db'))).toBe(stored);

      // No collector running: the command opens the file itself.
      const url = live.url;
      await live.close();
      const offline = await backup(join(dir, 'offline.db'), ['--url', url, '--db', join(dir, 'live.db')]);
      expect(offline.code, offline.stderr).toBe(0);
      expect(offline.stdout).toContain(`from ${join(dir, 'live.db')}; no collector at ${url}`);
      expect(await restoredTotal(join(dir, 'offline.db'))).toBe(stored);

      // An existing file is never overwritten.
      const again = await backup(join(dir, 'offline.db'), ['--url', url, '--db', join(dir, 'live.db')]);
      expect(again.code).toBe(1);
      expect(again.stderr).toContain('exists');
    },
  );

  it('behind tokens: off without EXTSCOPE_ADMIN_TOKEN, the read token does not open it, the admin token does', async () => {
    dir = await mkdtemp(join(tmpdir(), 'extscope-backup-'));
    const tokens = { ingestToken: 'ingest-0123456789abcdef', readToken: 'read-0123456789abcdef' };
    const noAdmin = await collector(join(dir, 'a.db'), tokens);
    const refused = await backup(join(dir, 'a-copy.db'), ['--url', noAdmin.url], { EXTSCOPE_ADMIN_TOKEN: tokens.readToken });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('403: admin routes are off: the collector has tokens but no EXTSCOPE_ADMIN_TOKEN');
    expect(existsSync(join(dir, 'a-copy.db'))).toBe(false);

    const adminToken = 'admin-0123456789abcdef';
    const guarded = await collector(join(dir, 'b.db'), { ...tokens, adminToken });
    const withRead = await fetch(`${guarded.url}/admin/backup`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.readToken}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(withRead.status).toBe(401);
    const wrong = await backup(join(dir, 'b-wrong.db'), ['--url', guarded.url], { EXTSCOPE_ADMIN_TOKEN: 'admin-wrong-0123456789' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('401');
    const ok = await backup(join(dir, 'b-copy.db'), ['--url', guarded.url], { EXTSCOPE_ADMIN_TOKEN: adminToken });
    expect(ok.code, ok.stderr).toBe(0);
    const db = new Database(join(dir, 'b-copy.db'), { readonly: true });
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });
});
