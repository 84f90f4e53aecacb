import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getJson, matrix, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { CUMULATIVE, MINUTE_NS, metricsRequest, msToNs, postMetrics, requestPoint } from '../collector/helpers/otlp.js';

const MAX = Number.MAX_SAFE_INTEGER;
const now = (): bigint => msToNs(Date.now());

/** `count` delta points of `value` in one stream and one minute, told apart by their start times. */
function manyPoints(count: number, value: number, timeNs: bigint) {
  return metricsRequest({
    resource: { service: 'svc', instance: 'i-1' },
    requests: Array.from({ length: count }, (_, index) =>
      requestPoint({ client: 'flood', count: value, startNs: timeNs - 1_000_000n * BigInt(index + 1), timeNs }),
    ),
  });
}

const oneRequest = (client: string, count: number, timeNs: bigint) =>
  metricsRequest({ resource: { service: 'svc', instance: 'i-1' }, requests: [requestPoint({ client, count, startNs: timeNs - MINUTE_NS, timeNs })] });

async function requestsOf(url: string, client: string): Promise<number> {
  return (await matrix(url)).rows.find((row) => row.client === client)?.requests ?? 0;
}

async function metricValue(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

describe('count overflow: counts are bounded where they enter and every sum is overflow-safe', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await temp.cleanup();
  });

  it('1,100 points of 2^53−1 in one stream and minute are a 400, and the store keeps answering and counting', async () => {
    const collector = await startTestCollector(temp.dir);
    try {
      const t = now();
      const flood = await postMetrics(collector.url, manyPoints(1100, MAX, t));
      expect(flood.status).toBe(400);
      expect(await flood.text()).toMatch(/limit is 1000000000/);
      // Two points under the bound whose sum in the same stream and minute is over it: refused too.
      expect((await postMetrics(collector.url, manyPoints(2, 600_000_000, t))).status).toBe(400);
      expect((await postMetrics(collector.url, oneRequest('after', 3, t))).status).toBe(200);
      expect(await requestsOf(collector.url, 'after')).toBe(3);
      expect(await requestsOf(collector.url, 'flood')).toBe(0);
      expect((await fetch(`${collector.url}/readyz`)).status).toBe(200);
    } finally {
      await collector.close();
    }
  });

  it('a cumulative total beyond the bound becomes the baseline (partial success), and what follows counts exactly', async () => {
    const collector = await startTestCollector(temp.dir);
    try {
      const t = now();
      const start = t - 10n * MINUTE_NS;
      const cumulative = (total: number, timeNs: bigint) =>
        metricsRequest({
          resource: { service: 'svc', instance: 'i-1' },
          temporality: CUMULATIVE,
          requests: [requestPoint({ client: 'cum', count: total, startNs: start, timeNs })],
        });
      const first = await postMetrics(collector.url, cumulative(MAX - 10, t - MINUTE_NS), { format: 'json' });
      expect(first.status).toBe(200);
      expect(((await first.json()) as { partialSuccess?: { rejectedDataPoints?: string | number } }).partialSuccess?.rejectedDataPoints).toBe('1');
      expect((await postMetrics(collector.url, cumulative(MAX - 4, t))).status).toBe(200);
      expect(await requestsOf(collector.url, 'cum')).toBe(6);
    } finally {
      await collector.close();
    }
  });

  it('a database poisoned by an older build (huge logged increments) recovers: rows quarantined and reported, reads and later exports work, shutdown is clean', async () => {
    const dbPath = join(temp.dir, 'x.db');
    const t = now();
    let collector = await startTestCollector(temp.dir, { dbPath, foldIntervalMs: 3_600_000 });
    expect((await postMetrics(collector.url, oneRequest('flood', 1, t))).status).toBe(200);
    await collector.close();

    // What the older build logged from the 1,100-point export: 2^53−1 each, unfolded, in one stream and minute.
    const db = new Database(dbPath);
    const row = db.prepare('SELECT * FROM point_log ORDER BY seq DESC LIMIT 1').get() as Record<string, number | bigint>;
    const insert = db.prepare(
      'INSERT INTO point_log (end_ns, stream_id, start_ns, minute, series_id, cell_id, all_cell_id, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    db.transaction(() => {
      for (let index = 1; index <= 1100; index++) {
        insert.run(BigInt(row['end_ns'] as number), row['stream_id'], BigInt(index), row['minute'], row['series_id'], row['cell_id'], row['all_cell_id'], MAX);
      }
    })();
    db.close();

    collector = await startTestCollector(temp.dir, { dbPath, foldIntervalMs: 3_600_000 });
    try {
      const { status } = await getJson(`${collector.url}/api/v1/matrix`);
      expect(status).toBe(200);
      expect(await requestsOf(collector.url, 'flood')).toBe(1);
      expect(await metricValue(collector.url, 'extscope_collector_quarantined_points_total')).toBe(1100);
      expect((await postMetrics(collector.url, oneRequest('flood', 4, t + 1_000_000n))).status).toBe(200);
      expect(await requestsOf(collector.url, 'flood')).toBe(5);
      expect((await fetch(`${collector.url}/readyz`)).status).toBe(200);
    } finally {
      await collector.close();
    }
  });
});
