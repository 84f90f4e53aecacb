import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getJson, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { MINUTE_NS, type ResourceMetricsSpec, metricsRequest, msToNs, postMetrics, requestPoint } from '../collector/helpers/otlp.js';

interface InstancesPage {
  total: number;
  nextOffset: number | null;
  instances: { instanceId: string | null }[];
}

const DAY = 24 * 60 * 60 * 1000;

describe('the instances list is paged, and ended instances age out of it', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await temp.cleanup();
  });

  it('1,200 stdio sessions: pages of at most 500 that together list each once; a week after they were last seen, none is listed', async () => {
    let now = Date.now();
    const collector = await startTestCollector(temp.dir, { clock: () => now });
    try {
      const t = msToNs(now);
      const resources: ResourceMetricsSpec[] = Array.from({ length: 1200 }, (_, index) => ({
        resource: { service: 'stdio-server', instance: `session-${String(index).padStart(4, '0')}` },
        requests: [requestPoint({ client: 'c', count: 1, startNs: t - MINUTE_NS, timeNs: t })],
      }));
      expect((await postMetrics(collector.url, metricsRequest(...resources), { gzip: true })).status).toBe(200);

      const first = await fetch(`${collector.url}/api/v1/instances`);
      expect(first.status).toBe(200);
      const text = await first.text();
      expect(text.length).toBeLessThan(400_000);
      const page = JSON.parse(text) as InstancesPage;
      expect(page).toMatchObject({ total: 1200, nextOffset: 500 });
      expect(page.instances).toHaveLength(500);

      const seen: (string | null)[] = [];
      let offset: number | null = 0;
      while (offset !== null) {
        const { status, body }: { status: number; body: InstancesPage } = await getJson<InstancesPage>(
          `${collector.url}/api/v1/instances?limit=300&offset=${offset}`,
        );
        expect(status).toBe(200);
        seen.push(...body.instances.map((instance) => instance.instanceId));
        offset = body.nextOffset;
      }
      expect(seen).toHaveLength(1200);
      expect(new Set(seen).size).toBe(1200);

      now += 7 * DAY + 60_000;
      const { body } = await getJson<InstancesPage>(`${collector.url}/api/v1/instances`);
      expect(body).toEqual({ total: 0, nextOffset: null, instances: [] });
    } finally {
      await collector.close();
    }
  });
});
