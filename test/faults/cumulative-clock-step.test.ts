import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type MatrixJson, type TestCollector, getJson, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { CUMULATIVE, type Json, metricsRequest, msToNs, postMetrics, requestPoint } from '../collector/helpers/otlp.js';
import { testDatabases } from '../collector/store/postgres-server.js';

/**
 * A cumulative sender whose clock steps back (an NTP correction) between two exports. Its totals keep growing
 * under one start time, stamped earlier than the one the collector stored. Before, those points were taken for
 * retries and added nothing until the sender's clock passed the stored time: held, and lost when the sender
 * stopped first (100 of 170 counted here). A higher total under one start is newer whatever its timestamp says.
 */

const MINUTE = 60_000;

function cumulative(points: { total: number; startMs: number; timeMs: number }[]): Json {
  return metricsRequest({
    resource: { service: 'clock-step', instance: 'c-1' },
    temporality: CUMULATIVE,
    requests: points.map((point) => requestPoint({ client: 'stepping', count: point.total, startNs: msToNs(point.startMs), timeNs: msToNs(point.timeMs) })),
  });
}

describe('a cumulative sender whose clock steps back', () => {
  const databases = testDatabases('clockstep');
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector | undefined;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await collector?.close();
    collector = undefined;
    await temp.cleanup();
  });
  afterAll(async () => {
    await databases.dropAll();
  });

  for (const backend of ['SQLite', 'PostgreSQL'] as const) {
    it(`${backend}: its totals count at once (170 of 170 after it stops); a retry or an older total adds nothing; once its clock passes, the difference`, async () => {
      collector = await startTestCollector(temp.dir, { dbPath: backend === 'SQLite' ? join(temp.dir, 'step.db') : await databases.create() });
      const url = collector.url;
      const send = async (request: Json): Promise<void> => {
        const response = await postMetrics(url, request, { format: 'json' });
        expect(response.status).toBe(200);
        expect(((await response.json()) as { partialSuccess?: { rejectedDataPoints?: string } }).partialSuccess?.rejectedDataPoints ?? '0').toBe('0');
      };
      const requests = async (): Promise<number> => {
        const { body } = await getJson<MatrixJson>(`${url}/api/v1/matrix?from=-1d`);
        return body.rows.find((row) => row.client === 'stepping')?.requests ?? 0;
      };
      const now = Date.now();
      const startMs = now - 30 * MINUTE;
      await send(cumulative([{ total: 100, startMs, timeMs: now - 5 * MINUTE }]));
      expect(await requests()).toBe(100);
      // The clock steps back ten minutes; two more exports, and the sender stops.
      const stepped = cumulative([{ total: 150, startMs, timeMs: now - 15 * MINUTE }]);
      await send(stepped);
      await send(cumulative([{ total: 170, startMs, timeMs: now - 14 * MINUTE }]));
      expect(await requests()).toBe(170);
      // A retry of an export, and an export from before the step arriving late: nothing more.
      await send(stepped);
      await send(cumulative([{ total: 120, startMs, timeMs: now - 16 * MINUTE }]));
      expect(await requests()).toBe(170);
      // Had it gone on until its clock passed the stored time: the difference from the last total, once.
      await send(cumulative([{ total: 200, startMs, timeMs: now - 4 * MINUTE }]));
      expect(await requests()).toBe(200);
    });
  }
});
