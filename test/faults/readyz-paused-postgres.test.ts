import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { READY_TIMEOUT_MS } from '../../collector/ops/health.js';
import { type TestCollector, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { testDatabases } from '../collector/store/postgres-server.js';

/**
 * `/readyz` on PostgreSQL while the database does not answer: a transaction of another client holds an exclusive
 * lock on the table the readiness probe writes, so the probe's write waits, as it would on a paused server or a
 * lost network. The probe must still answer, 503 with the reason, and be ready again once the lock goes.
 */

interface Readiness {
  status: string;
  reasons: string[];
}

async function readyz(url: string): Promise<{ status: number; body: Readiness }> {
  // Far beyond the probe's own deadline: a hung probe fails here instead of hanging the test.
  const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(30_000) });
  return { status: response.status, body: (await response.json()) as Readiness };
}

describe('/readyz answers while PostgreSQL does not', () => {
  const databases = testDatabases('readyz');
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector | undefined;
  let blocker: pg.Client | undefined;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await blocker?.end().catch(() => undefined);
    blocker = undefined;
    await collector?.close();
    collector = undefined;
    await temp.cleanup();
  });
  afterAll(async () => {
    await databases.dropAll();
  });

  it(
    'a held lock on the table it writes: 503 "did not answer" within its deadline, three probes in a row; ready again once released',
    { timeout: 60_000 },
    async () => {
      const url = await databases.create();
      collector = await startTestCollector(temp.dir, { dbPath: url });
      expect(await readyz(collector.url)).toMatchObject({ status: 200, body: { status: 'ready', reasons: [] } });

      blocker = new pg.Client({ connectionString: url });
      await blocker.connect();
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE meta IN ACCESS EXCLUSIVE MODE');
      for (let probe = 0; probe < 3; probe++) {
        expect(await readyz(collector.url)).toEqual({
          status: 503,
          body: expect.objectContaining({ status: 'not ready', reasons: [`database did not answer within ${READY_TIMEOUT_MS} ms`] }) as unknown,
        });
      }
      // The probe's write was waiting for the lock: it is there, blocked, not given up.
      const { rows } = await blocker.query<{ waiting: string }>(
        "SELECT count(*) AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO meta%'",
      );
      expect(Number(rows[0]?.waiting)).toBeGreaterThanOrEqual(1);

      await blocker.query('ROLLBACK');
      await expect.poll(async () => (await readyz((collector as TestCollector).url)).status, { timeout: 20_000, interval: 200 }).toBe(200);
    },
  );
});
