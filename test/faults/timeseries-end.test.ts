import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getJson, startTestCollector, tempDir } from '../collector/helpers/collector.js';

describe('the time series ends now by default', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await temp.cleanup();
  });

  it('without `to`, no step starts after the current one (1-minute steps over the last hour, and the automatic step over 24 h)', async () => {
    const collector = await startTestCollector(temp.dir);
    try {
      for (const query of ['&from=-1h&step=1m', '']) {
        const before = Date.now();
        const { status, body } = await getJson<{ points: { t: string }[]; stepMinutes: number }>(
          `${collector.url}/api/v1/timeseries?extension=io.modelcontextprotocol/tasks${query}`,
        );
        expect(status).toBe(200);
        const starts = body.points.map((point) => Date.parse(point.t));
        const stepMs = body.stepMinutes * 60_000;
        const current = Math.floor(before / stepMs) * stepMs;
        expect(Math.max(...starts)).toBeLessThanOrEqual(current + stepMs);
        expect(starts.filter((start) => start > Date.now()).length).toBe(0);
      }
    } finally {
      await collector.close();
    }
  });
});
