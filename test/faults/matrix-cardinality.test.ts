import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OVERFLOW_VALUE } from '../../contract/index.js';
import { getJson, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import type { MatrixJson } from '../collector/helpers/collector.js';
import { MINUTE_NS, extensionPoint, metricsRequest, msToNs, postMetrics, requestPoint } from '../collector/helpers/otlp.js';

interface LimitedMatrix extends MatrixJson {
  rowsTotal: number;
  extensionsTotal: number;
}

async function metricValue(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(
    text
      .split('\n')
      .find((line) => line.startsWith(`${name} `))
      ?.split(' ')[1],
  );
}

describe('matrix cardinality: every sender-controlled dimension is bounded, the matrix answer too', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await temp.cleanup();
  });

  it('5,000 client names and 1,100 ids from one instance: all accepted, names past 2,000 and ids past 1,024 under _OTHER, nothing lost, a bounded and quick matrix, limits kept across a restart', async () => {
    const dbPath = join(temp.dir, 'x.db');
    let collector = await startTestCollector(temp.dir, { dbPath });
    const t = msToNs(Date.now());
    try {
      for (let batch = 0; batch < 5; batch++) {
        const requests = Array.from({ length: 1000 }, (_, index) =>
          requestPoint({ client: `client-${batch * 1000 + index}`, count: 1, startNs: t - MINUTE_NS, timeNs: t }),
        );
        expect((await postMetrics(collector.url, metricsRequest({ resource: { service: 'svc', instance: 'i-1' }, requests }))).status).toBe(200);
      }
      // The 1,025th and later ids of this instance in this hour: counted under _OTHER, not a 400.
      const extensions = Array.from({ length: 1100 }, (_, index) =>
        extensionPoint({
          client: 'client-0',
          count: 1,
          startNs: t - MINUTE_NS,
          timeNs: t,
          id: `com.example/ext-${index}`,
          clientDeclared: true,
          serverDeclared: false,
        }),
      );
      expect((await postMetrics(collector.url, metricsRequest({ resource: { service: 'svc', instance: 'i-1' }, extensions }), { gzip: true })).status).toBe(
        200,
      );

      const started = performance.now();
      const { status, body } = await getJson<LimitedMatrix>(`${collector.url}/api/v1/matrix?from=-1h`);
      const elapsed = performance.now() - started;
      expect(status).toBe(200);
      expect(elapsed).toBeLessThan(5_000);
      expect(body.rowsTotal).toBe(2001);
      expect(body.rows).toHaveLength(500);
      expect(body.rows.at(-1)?.client).toBe(OVERFLOW_VALUE);
      expect(body.rows.reduce((sum, row) => sum + row.requests, 0)).toBe(5000);
      expect(body.extensionsTotal).toBe(1025);
      expect(body.extensions).toHaveLength(200);
      expect(body.extensions.at(-1)).toBe(OVERFLOW_VALUE);
      const declared = body.rows.flatMap((row) => row.extensions).reduce((sum, cell) => sum + cell.clientDeclared, 0);
      expect(declared).toBe(1100);
      const all = await getJson<LimitedMatrix>(`${collector.url}/api/v1/matrix?from=-1h&limit=5000&extensionLimit=20`);
      expect(all.body.rows.find((row) => row.client === OVERFLOW_VALUE)?.requests).toBe(3000);

      expect(await metricValue(collector.url, 'extscope_collector_dimension_overflow_total')).toBe(3000);
      expect(await metricValue(collector.url, 'extscope_collector_extension_id_overflow_total')).toBe(76);
      expect((await fetch(`${collector.url}/healthz`)).status).toBe(200);
    } finally {
      await collector.close();
    }

    // The limit is the database's: after a restart a new name still goes to _OTHER, a known one does not.
    collector = await startTestCollector(temp.dir, { dbPath });
    try {
      const later = t + 1_000_000n;
      const requests = [
        requestPoint({ client: 'client-new', count: 2, startNs: later - MINUTE_NS, timeNs: later }),
        requestPoint({ client: 'client-7', count: 3, startNs: later - MINUTE_NS, timeNs: later }),
      ];
      expect((await postMetrics(collector.url, metricsRequest({ resource: { service: 'svc', instance: 'i-1' }, requests }))).status).toBe(200);
      const { body } = await getJson<LimitedMatrix>(`${collector.url}/api/v1/matrix?from=-1h&limit=5000&extensionLimit=20`);
      expect(body.rows.find((row) => row.client === 'client-new')).toBeUndefined();
      expect(body.rows.find((row) => row.client === OVERFLOW_VALUE)?.requests).toBe(3002);
      expect(body.rows.find((row) => row.client === 'client-7')?.requests).toBe(4);
    } finally {
      await collector.close();
    }
  });

  it('service names and instance ids past their limits: the export accepted, its retry counted once, under _OTHER, counted on /metrics, the same after a restart, nothing lost', async () => {
    const dbPath = join(temp.dir, 'resources.db');
    const options = { dbPath, limits: { maxValuesPerDimension: 3, maxInstances: 10 } };
    let collector = await startTestCollector(temp.dir, options);
    const t = msToNs(Date.now());
    const total = async (query = ''): Promise<number> =>
      (await getJson<MatrixJson>(`${collector.url}/api/v1/matrix?from=-1h${query}`)).body.rows.reduce((sum, row) => sum + row.requests, 0);
    // 5 services × 4 instances, one request each, in one export.
    const resources = Array.from({ length: 20 }, (_, index) => ({
      resource: { service: `s-${Math.floor(index / 4)}`, instance: `i-${index % 4}` },
      requests: [requestPoint({ client: 'c', count: 1, startNs: t - MINUTE_NS, timeNs: t })],
    }));
    try {
      const request = metricsRequest(...resources);
      expect((await postMetrics(collector.url, request)).status).toBe(200);
      expect((await postMetrics(collector.url, request)).status).toBe(200);
      expect(await total()).toBe(20);
      // s-3 and s-4 are past 3 services; past 10 instances, the rest of s-2 is its instance _OTHER.
      expect(await total(`&service=${OVERFLOW_VALUE}`)).toBe(8);
      expect(await total('&service=s-2')).toBe(4);
      const { body } = await getJson<{ instances: { service: string; instanceId: string }[]; total: number }>(`${collector.url}/api/v1/instances`);
      expect(body.total).toBe(12);
      expect(body.instances.map((instance) => `${instance.service}/${instance.instanceId}`)).toContain(`s-2/${OVERFLOW_VALUE}`);
      expect(body.instances.map((instance) => `${instance.service}/${instance.instanceId}`)).toContain(`${OVERFLOW_VALUE}/${OVERFLOW_VALUE}`);
      expect(await metricValue(collector.url, 'extscope_collector_instance_overflow_total')).toBe(2 + 8);

      await collector.close();
      collector = await startTestCollector(temp.dir, options);
      const later = metricsRequest({
        resource: { service: 's-0', instance: 'i-9' },
        requests: [requestPoint({ client: 'c', count: 5, startNs: t - MINUTE_NS, timeNs: t })],
      });
      expect((await postMetrics(collector.url, later)).status).toBe(200);
      expect((await postMetrics(collector.url, request)).status).toBe(200);
      expect(await total()).toBe(25);
      expect(await total('&service=s-0')).toBe(4 + 5);
      expect((await getJson<{ total: number }>(`${collector.url}/api/v1/instances`)).body.total).toBe(13);
      expect(await metricValue(collector.url, 'extscope_collector_instance_overflow_total')).toBe(1 + 10);
    } finally {
      await collector.close();
    }
  });
});
