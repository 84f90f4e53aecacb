import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATA_BEHIND_HEADER } from '../../collector/http/api/v1/index.js';
import { matrix, startTestCollector } from '../collector/helpers/collector.js';
import { MINUTE_NS, metricsRequest, msToNs, postMetrics, requestPoint } from '../collector/helpers/otlp.js';
import { fillDisk, integrityCheck, mountTmpfs, remount, unmount } from './disk.js';

const dir = join(tmpdir(), `extscope-disk-full-${process.pid}`);

/** `clients` new streams (one request each): new rows, so new pages. */
function wideExport(prefix: string, clients: number, timeNs: bigint) {
  return metricsRequest({
    resource: { service: 'svc', instance: 'i-1' },
    requests: Array.from({ length: clients }, (_, index) =>
      requestPoint({ client: `${prefix}-${index}-${'x'.repeat(200)}`, count: 1, startNs: timeNs - MINUTE_NS, timeNs }),
    ),
  });
}

const total = async (url: string): Promise<number> => (await matrix(url)).rows.reduce((sum, row) => sum + row.requests, 0);

describe('disk full: exports are turned away with 503, reads keep answering, and it recovers once there is space', () => {
  beforeAll(() => mountTmpfs(dir, '4m'));
  afterAll(() => unmount(dir));

  it('503 + Retry-After and not ready while full; reads answer; after space is freed, ready again without a restart, exact counts, intact database', async () => {
    const dbPath = join(dir, 'extscope.db');
    const collector = await startTestCollector(dir, { dbPath, foldIntervalMs: 3_600_000, maintenanceIntervalMs: 3_600_000 });
    const t = msToNs(Date.now());
    try {
      expect((await postMetrics(collector.url, wideExport('before', 5, t))).status).toBe(200);
      expect(await total(collector.url)).toBe(5);
      expect((await fetch(`${collector.url}/readyz`)).status).toBe(200);

      const filler = fillDisk(dir);
      const refused = wideExport('during', 2000, t);
      const answer = await postMetrics(collector.url, refused);
      expect(answer.status).toBe(503);
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
      const ready = await fetch(`${collector.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(JSON.stringify(await ready.json())).toMatch(/not writable/);

      // Reads keep answering from what is stored.
      const read = await fetch(`${collector.url}/api/v1/matrix?from=-7d`);
      expect(read.status).toBe(200);
      expect((await fetch(`${collector.url}/metrics`)).status).toBe(200);
      expect(await total(collector.url)).toBe(5);
      expect((await fetch(`${collector.url}/healthz`)).status).toBe(200);

      remount(dir, 'size=64m');
      rmSync(filler);
      expect((await fetch(`${collector.url}/readyz`)).status).toBe(200);
      // The sender retries what was refused: it counts once, as does what comes after.
      expect((await postMetrics(collector.url, refused)).status).toBe(200);
      expect((await postMetrics(collector.url, refused)).status).toBe(200);
      expect((await postMetrics(collector.url, wideExport('after', 3, t))).status).toBe(200);
      const view = await fetch(`${collector.url}/api/v1/matrix?from=-7d`);
      expect(view.headers.get(DATA_BEHIND_HEADER)).toBeNull();
      expect(await total(collector.url)).toBe(5 + 2000 + 3);
      expect(process.memoryUsage().heapUsed).toBeLessThan(1024 * 1024 * 1024);
    } finally {
      await collector.close();
    }
    expect(integrityCheck(dbPath)).toBe('ok');
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${dbPath}${suffix}`, { force: true });
    remount(dir, 'size=4m');
  });

  it('when a fold cannot write, reads answer from what is stored and say they may be behind', async () => {
    const dbPath = join(dir, 'behind.db');
    const collector = await startTestCollector(dir, { dbPath, foldIntervalMs: 3_600_000, maintenanceIntervalMs: 3_600_000 });
    const t = msToNs(Date.now());
    try {
      expect((await postMetrics(collector.url, wideExport('a', 5, t))).status).toBe(200);
      expect(await total(collector.url)).toBe(5);
      // Accepted, not folded yet; then the disk fills up.
      expect((await postMetrics(collector.url, wideExport('b', 1500, t))).status).toBe(200);
      const filler = fillDisk(dir);
      const read = await fetch(`${collector.url}/api/v1/matrix?from=-7d`);
      expect(read.status).toBe(200);
      const body = (await read.json()) as { behind: boolean };
      expect(read.headers.get(DATA_BEHIND_HEADER)).toBe('true');
      expect(body.behind).toBe(true);
      expect(await total(collector.url)).toBe(5);
      expect((await fetch(`${collector.url}/metrics`)).status).toBe(200);
      remount(dir, 'size=64m');
      rmSync(filler);
      expect(await total(collector.url)).toBe(5 + 1500);
    } finally {
      await collector.close();
    }
    expect(integrityCheck(dbPath)).toBe('ok');
  });
});
