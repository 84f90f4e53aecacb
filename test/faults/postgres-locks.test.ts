import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { READY_TIMEOUT_MS } from '../../collector/ops/health.js';
import { type TestCollector, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { MINUTE_NS, encodeMetrics, metricsRequest, msToNs, requestPoint } from '../collector/helpers/otlp.js';
import { testDatabases } from '../collector/store/postgres-server.js';

/**
 * PostgreSQL waited without bound: a 20 s `LOCK TABLE pending_increments` (an operator, a migration, a `VACUUM
 * FULL`) held every export 20 s while both replicas' /readyz said ready, and a session holding the fold's advisory
 * lock held every matrix read of the other replica as long. Now every statement runs under `lock_timeout` and
 * `statement_timeout` (a refused export is a 503 the sender retries, a read goes on without the fold), and /readyz
 * takes the locks an export takes.
 */

/** What an agent gives an export (the OpenTelemetry exporter's default timeout), and what a dashboard waits for a read. */
const EXPORT_DEADLINE_MS = 10_000;
const READ_DEADLINE_MS = 10_000;
const LOCK_HELD_MS = 20_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Timed {
  status: number;
  ms: number;
}

/** One export of `count` requests of client `locked`, each its own delta interval (by `index`). */
async function exportOnce(url: string, index: number, minuteMs: number): Promise<Timed> {
  const startNs = msToNs(minuteMs) + BigInt(index) * 1_000_000n;
  const body = encodeMetrics(metricsRequest({ requests: [requestPoint({ client: 'locked', count: 1, startNs, timeNs: startNs + MINUTE_NS / 2n })] }));
  const started = performance.now();
  const response = await fetch(`${url}/v1/metrics`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf' },
    body,
    signal: AbortSignal.timeout(60_000),
  });
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

async function timedGet(url: string): Promise<Timed & { body: unknown }> {
  const started = performance.now();
  const response = await fetch(url, { signal: AbortSignal.timeout(60_000) });
  return { status: response.status, body: await response.json(), ms: performance.now() - started };
}

async function counted(url: string): Promise<number> {
  const { status, body } = await timedGet(`${url}/api/v1/matrix?from=-7d`);
  expect(status).toBe(200);
  return (body as { rows: { client: string; requests: number }[] }).rows.find((row) => row.client === 'locked')?.requests ?? 0;
}

describe('PostgreSQL locks held elsewhere', () => {
  const databases = testDatabases('locks');
  let temp: Awaited<ReturnType<typeof tempDir>>;
  const collectors: TestCollector[] = [];
  let blocker: pg.Client | undefined;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await blocker?.end().catch(() => undefined);
    blocker = undefined;
    for (const collector of collectors.splice(0)) await collector.close();
    await temp.cleanup();
  });
  afterAll(async () => {
    await databases.dropAll();
  });

  it(
    `a ${LOCK_HELD_MS / 1000} s ACCESS EXCLUSIVE lock on pending_increments: /readyz 503 within its budget, exports and matrix reads answered (503 or 200) within their deadlines; once released, every export counted once`,
    { timeout: 120_000 },
    async () => {
      const url = await databases.create();
      const collector = await startTestCollector(temp.dir, { dbPath: url });
      collectors.push(collector);
      const minuteMs = Math.floor(Date.now() / 60_000) * 60_000 - 10 * 60_000;
      let index = 0;
      expect((await exportOnce(collector.url, index++, minuteMs)).status).toBe(200);
      expect((await timedGet(`${collector.url}/readyz`)).status).toBe(200);

      blocker = new pg.Client({ connectionString: url });
      await blocker.connect();
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE pending_increments IN ACCESS EXCLUSIVE MODE');
      const lockedAt = performance.now();

      const readiness = await timedGet(`${collector.url}/readyz`);
      // Exports one after another as an agent sends them, and matrix reads beside them, while the lock is held.
      const exports: (Timed & { index: number })[] = [];
      const reads: Timed[] = [];
      const exporting = (async () => {
        while (performance.now() - lockedAt < LOCK_HELD_MS - EXPORT_DEADLINE_MS) {
          const at = index++;
          exports.push({ index: at, ...(await exportOnce(collector.url, at, minuteMs)) });
        }
      })();
      const reading = (async () => {
        while (performance.now() - lockedAt < LOCK_HELD_MS - READ_DEADLINE_MS) {
          reads.push(await timedGet(`${collector.url}/api/v1/matrix?from=-7d`));
          await sleep(500);
        }
      })();
      await Promise.all([exporting, reading]);
      const duringLock = await timedGet(`${collector.url}/readyz`);
      await sleep(Math.max(0, LOCK_HELD_MS - (performance.now() - lockedAt)));
      await blocker.query('ROLLBACK');

      // Refused exports are sent again, as an agent retries them, until stored.
      const refused = exports.filter((one) => one.status !== 200);
      for (const one of refused) {
        let status = 0;
        for (let attempt = 0; attempt < 20 && status !== 200; attempt++) {
          status = (await exportOnce(collector.url, one.index, minuteMs)).status;
          if (status !== 200) await sleep(500);
        }
        expect(status).toBe(200);
      }
      await expect.poll(async () => (await timedGet(`${collector.url}/readyz`)).status, { timeout: 20_000, interval: 200 }).toBe(200);
      const total = await counted(collector.url);

      console.log(
        `[faults] ${LOCK_HELD_MS / 1000} s lock on pending_increments: /readyz ${readiness.status} in ${readiness.ms.toFixed(0)} ms (${JSON.stringify((readiness.body as { reasons: string[] }).reasons)}); ` +
          `${exports.length} exports → ${exports.map((one) => `${one.status}/${one.ms.toFixed(0)}ms`).join(' ')}; ${reads.length} matrix reads → ${reads.map((one) => `${one.status}/${one.ms.toFixed(0)}ms`).join(' ')}; ` +
          `${refused.length} retried after; counted ${total} of ${index}`,
      );
      expect(readiness.status).toBe(503);
      expect(readiness.ms).toBeLessThan(READY_TIMEOUT_MS + 1000);
      expect(duringLock.status).toBe(503);
      expect(exports.length).toBeGreaterThan(0);
      for (const one of exports) {
        expect([200, 503]).toContain(one.status);
        expect(one.ms).toBeLessThan(EXPORT_DEADLINE_MS);
      }
      expect(reads.length).toBeGreaterThan(0);
      for (const one of reads) {
        expect([200, 503]).toContain(one.status);
        expect(one.ms).toBeLessThan(READ_DEADLINE_MS);
      }
      expect(total).toBe(index);
    },
  );

  it(
    "a session holding the fold lock: the other replica's matrix reads answer within the lock timeout, and count every export once it is released",
    { timeout: 120_000 },
    async () => {
      const url = await databases.create();
      const ingest = await startTestCollector(temp.dir, { dbPath: url });
      collectors.push(ingest);
      const reader = await startTestCollector(temp.dir, { dbPath: url });
      collectors.push(reader);
      const minuteMs = Math.floor(Date.now() / 60_000) * 60_000 - 10 * 60_000;
      expect((await exportOnce(ingest.url, 0, minuteMs)).status).toBe(200);
      expect(await counted(reader.url)).toBe(1);

      blocker = new pg.Client({ connectionString: url });
      await blocker.connect();
      await blocker.query("SELECT pg_advisory_lock(hashtextextended('extscope:fold', 0))");
      // Pending now, and no replica can fold it.
      expect((await exportOnce(ingest.url, 1, minuteMs)).status).toBe(200);
      const reads: Timed[] = [];
      for (let read = 0; read < 3; read++) reads.push(await timedGet(`${reader.url}/api/v1/matrix?from=-7d`));
      await blocker.query("SELECT pg_advisory_unlock(hashtextextended('extscope:fold', 0))");
      const after = await counted(reader.url);
      console.log(
        `[faults] fold lock held elsewhere: the other replica's matrix reads → ${reads.map((one) => `${one.status}/${one.ms.toFixed(0)}ms`).join(' ')}; after release ${after} counted of 2`,
      );
      for (const one of reads) {
        expect(one.status).toBe(200);
        // The lock timeout (3 s by default) and the read itself.
        expect(one.ms).toBeLessThan(8000);
      }
      expect(after).toBe(2);
    },
  );
});
