import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { type ClientRequest, type IncomingMessage, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ChildCollector, spawnCollector, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { fillDisk, mountTmpfs, unmount } from './disk.js';
import { fillCells } from './matrix-fill.js';

/**
 * Online backups (`POST /admin/backup`) cost a copy of the database in the temporary directory until the answer
 * is read: ten clients that never read held ten copies (1.4 GB in the probe); a web page of another site could
 * start one on a loopback collector without tokens; a full temporary directory was a 500.
 */

const JSON_HEADERS = { 'content-type': 'application/json' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The backup copies in a temporary directory, and the bytes they hold. */
function copies(tmp: string): { count: number; bytes: number } {
  let bytes = 0;
  const dirs = readdirSync(tmp).filter((name) => name.startsWith('extscope-backup-'));
  for (const dir of dirs) for (const file of readdirSync(join(tmp, dir))) bytes += statSync(join(tmp, dir, file)).size;
  return { count: dirs.length, bytes };
}

/** A backup request whose answer is never read: its status once the headers are in. */
function unreadBackup(url: string): { request: ClientRequest; status: Promise<number> } {
  const request = httpRequest(`${url}/admin/backup`, { method: 'POST', headers: JSON_HEADERS });
  const status = new Promise<number>((resolve) => {
    request.on('response', (response: IncomingMessage) => {
      response.pause();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', () => resolve(0));
  });
  request.end('{}');
  return { request, status };
}

describe('online backups are bounded and same-origin', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let child: ChildCollector | undefined;
  let tmp: string;
  let mounted: string | undefined;
  // Each test fills a database of ~35 MB and starts a collector on it: slow on a loaded machine.
  beforeEach(async () => {
    temp = await tempDir();
    tmp = join(temp.dir, 'tmp');
    mkdirSync(tmp);
  });
  afterEach(async () => {
    child?.child.kill('SIGKILL');
    await child?.exited;
    child = undefined;
    if (mounted !== undefined) unmount(mounted);
    mounted = undefined;
    await temp.cleanup();
  });

  /** A collector on a database larger than what loopback sockets buffer (~25 MB), its temporary directory `tmpDir`. */
  async function collector(tmpDir: string): Promise<ChildCollector> {
    const dbPath = join(temp.dir, 'extscope.db');
    const empty = await startTestCollector(temp.dir, { dbPath });
    await empty.close();
    fillCells(dbPath, 200, 1000, Date.now());
    child = await spawnCollector(dbPath, [], { TMPDIR: tmpDir });
    return child;
  }

  it(
    'ten concurrent backups whose answers are never read hold at most one copy; the others are 503 with Retry-After; the copy is removed when its client goes',
    { timeout: 180_000 },
    async () => {
      const { url } = await collector(tmp);
      const requests = Array.from({ length: 10 }, () => unreadBackup(url));
      const statuses = await Promise.all(requests.map(({ status }) => status));
      await sleep(1000);
      const held = copies(tmp);
      const dbBytes = statSync(join(temp.dir, 'extscope.db')).size;
      console.log(
        `[faults] 10 concurrent unread backups of a ${(dbBytes / 1e6).toFixed(1)} MB database: statuses ${statuses.join(' ')}; ${held.count} copy held (${(held.bytes / 1e6).toFixed(1)} MB) in TMPDIR`,
      );
      expect(statuses.filter((status) => status === 200)).toHaveLength(1);
      expect(statuses.filter((status) => status === 503)).toHaveLength(9);
      // The one being sent is held until its client reads it or goes; before, each of the ten held a copy.
      expect(held.count).toBeLessThanOrEqual(1);
      expect(held.bytes).toBeLessThanOrEqual(dbBytes);
      for (const { request } of requests) request.destroy();
      await expect.poll(() => copies(tmp).count, { timeout: 10_000 }).toBe(0);
      // And the next one is made.
      const next = await fetch(`${url}/admin/backup`, { method: 'POST', headers: JSON_HEADERS, body: '{}' });
      expect(next.status).toBe(200);
      expect((await next.arrayBuffer()).byteLength).toBeGreaterThan(0);
    },
  );

  it(
    'a cross-origin POST (a web page of another site) gets 403 and makes no copy, also on loopback without tokens; so does a simple content type',
    { timeout: 180_000 },
    async () => {
      const { url } = await collector(tmp);
      const crossSite = await fetch(`${url}/admin/backup`, {
        method: 'POST',
        headers: { origin: 'https://attacker.example', 'content-type': 'text/plain' },
        body: 'x',
      });
      expect(crossSite.status).toBe(403);
      const fetchMetadata = await fetch(`${url}/admin/backup`, { method: 'POST', headers: { 'sec-fetch-site': 'cross-site', ...JSON_HEADERS }, body: '{}' });
      expect(fetchMetadata.status).toBe(403);
      const simple = await fetch(`${url}/admin/backup`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1' });
      expect(simple.status).toBe(403);
      expect(((await simple.json()) as { message: string }).message).toMatch(/Content-Type: application\/json/);
      expect(copies(tmp).count).toBe(0);
      const sameOrigin = await fetch(`${url}/admin/backup`, {
        method: 'POST',
        headers: { origin: url, 'sec-fetch-site': 'same-origin', ...JSON_HEADERS },
        body: '{}',
      });
      expect(sameOrigin.status).toBe(200);
      await sameOrigin.arrayBuffer();
    },
  );

  it('a full temporary directory is a 503 with Retry-After, and the collector goes on', { timeout: 180_000 }, async () => {
    mounted = join(temp.dir, 'small-tmp');
    mountTmpfs(mounted, '2m');
    fillDisk(mounted);
    const { url } = await collector(mounted);
    const response = await fetch(`${url}/admin/backup`, { method: 'POST', headers: JSON_HEADERS, body: '{}' });
    const body = (await response.json()) as { message: string };
    console.log(`[faults] backup into a full TMPDIR: ${response.status} ${body.message}`);
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).not.toBeNull();
    await expect.poll(() => copies(mounted as string).count, { timeout: 10_000 }).toBe(0);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });
});
