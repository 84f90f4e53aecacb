import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCollector, getJson, startTestCollector, tempDir } from '../helpers/collector.js';
import { MINUTE_NS, metricsRequest, msToNs, postMetrics, requestPoint } from '../helpers/otlp.js';

const MINUTE_MS = 60_000;
const nowNs = msToNs(Date.now());

interface ChangesJson {
  historyFrom: string | null;
  before: { requests: number };
}

describe('GET /api/v1/changes: how much history is held', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;

  beforeAll(async () => {
    temp = await tempDir();
    collector = await startTestCollector(temp.dir);
  });
  afterAll(async () => {
    await collector.close();
    await temp.cleanup();
  });

  it('is null before anything is held', async () => {
    const { status, body } = await getJson<ChangesJson>(`${collector.url}/api/v1/changes?from=-1h`);
    expect(status).toBe(200);
    expect(body.historyFrom).toBeNull();
  });

  it("counts from the points' own timestamps: a backfill sent now of points three hours old moves it back three hours", async () => {
    const minutesAgo = 180;
    const timeNs = nowNs - BigInt(minutesAgo) * MINUTE_NS;
    const request = metricsRequest({
      resource: { service: 'restored', instance: 'r-1' },
      requests: [requestPoint({ client: 'alpha', version: '1.0', count: 5, declaration: 'declared', startNs: timeNs - MINUTE_NS, timeNs })],
    });
    expect((await postMetrics(collector.url, request)).status).toBe(200);
    const { body } = await getJson<ChangesJson>(`${collector.url}/api/v1/changes?from=-4h`);
    expect(body.historyFrom).not.toBeNull();
    const from = Date.parse(body.historyFrom ?? '');
    // The start of the minute its points were counted in: within a minute of the points' start, whole minutes.
    expect(from % MINUTE_MS).toBe(0);
    expect(Math.abs(from - (Date.now() - (minutesAgo + 1) * MINUTE_MS))).toBeLessThan(3 * MINUTE_MS);
    // The earlier of two four-hour periods ending now holds nothing, the later one the backfilled requests.
    expect(body.before.requests).toBe(0);
  });
});
