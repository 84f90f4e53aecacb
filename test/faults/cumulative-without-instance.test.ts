import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getJson, matrix, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { CUMULATIVE, DELTA, type Json, MINUTE_NS, attribute, metricsRequest, msToNs, postMetrics, requestPoint } from '../collector/helpers/otlp.js';
import { testDatabases } from '../collector/store/postgres-server.js';

interface ExportAnswer {
  partialSuccess?: { rejectedDataPoints?: string; errorMessage?: string };
}

interface RejectionsAnswer {
  total: number;
  rejections: { reason: string; service: string | null; points: number; explanation: string }[];
}

interface InstancesAnswer {
  instances: { service: string | null; instanceId: string | null; host: string | null }[];
}

const pid = (value: number): Json[] => [attribute('process.pid', value)];

const databases = testDatabases('noinstance');
afterAll(() => databases.dropAll());

describe.each(['SQLite', 'PostgreSQL'] as const)('cumulative streams without service.instance.id (%s)', (backend) => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let dbPath: string | undefined;
  beforeEach(async () => {
    temp = await tempDir();
    dbPath = backend === 'PostgreSQL' ? await databases.create() : undefined;
  });
  afterEach(async () => {
    await temp.cleanup();
  });

  it('two processes that carry neither an instance id nor a pid are refused point by point (partial success), not mis-counted, and counted by reason and service on /metrics and in the API; with ids they count exactly', async () => {
    const collector = await startTestCollector(temp.dir, dbPath === undefined ? {} : { dbPath });
    try {
      const t = msToNs(Date.now());
      // The helper's resource always has host.name: without process.pid the processes still cannot be told apart.
      const send = (instance: string | undefined, total: number, startNs: bigint, timeNs: bigint, client: string) =>
        postMetrics(
          collector.url,
          metricsRequest({
            resource: { service: 'svc', ...(instance === undefined ? {} : { instance }) },
            temporality: CUMULATIVE,
            requests: [requestPoint({ client, count: total, startNs, timeNs })],
          }),
          { format: 'json' },
        );
      // Process A and process B, interleaved: A 3 → 8, B 5 → 8 (16 requests in all).
      const startA = t - 10n * MINUTE_NS;
      const startB = t - 9n * MINUTE_NS;
      const answers: ExportAnswer[] = [];
      for (const [instance, client] of [
        [undefined, 'anonymous'],
        ['a', 'identified'],
      ] as const) {
        for (const [who, total, offset] of [
          ['a', 3, 4n],
          ['b', 5, 3n],
          ['a', 8, 2n],
          ['b', 8, 1n],
        ] as const) {
          const id = instance === undefined ? undefined : who;
          const response = await send(id, total, who === 'a' ? startA : startB, t - offset * MINUTE_NS, client);
          expect(response.status).toBe(200);
          if (instance === undefined) answers.push((await response.json()) as ExportAnswer);
        }
      }
      for (const answer of answers) {
        expect(answer.partialSuccess?.rejectedDataPoints).toBe('1');
        expect(answer.partialSuccess?.errorMessage).toMatch(/service\.instance\.id/);
        expect(answer.partialSuccess?.errorMessage).toMatch(/process\.pid/);
      }
      const rows = (await matrix(collector.url)).rows;
      expect(rows.find((row) => row.client === 'anonymous')).toBeUndefined();
      expect(rows.find((row) => row.client === 'identified')?.requests).toBe(16);
      // Every refusal is visible: on /metrics and in the query API, by reason and service.
      const exposition = await (await fetch(`${collector.url}/metrics`)).text();
      expect(exposition).toContain('extscope_collector_points_rejected_total{reason="no_instance_identity",service="svc"} 4');
      const { body: refused } = await getJson<RejectionsAnswer>(`${collector.url}/api/v1/rejections`);
      expect(refused.total).toBe(4);
      expect(refused.rejections).toEqual([
        { reason: 'no_instance_identity', service: 'svc', points: 4, explanation: expect.stringMatching(/service\.instance\.id/) as unknown },
      ]);

      // Delta points need no instance id: each is an increment of its own.
      const delta = metricsRequest({
        resource: { service: 'svc' },
        temporality: DELTA,
        requests: [requestPoint({ client: 'delta', count: 2, startNs: t - MINUTE_NS, timeNs: t })],
      });
      expect((await postMetrics(collector.url, delta)).status).toBe(200);
      expect((await matrix(collector.url)).rows.find((row) => row.client === 'delta')?.requests).toBe(2);
    } finally {
      await collector.close();
    }
  });

  it('processes told apart by host.name and process.pid count exactly, each under its derived instance, across a restart that gets the same pid and a retried export', async () => {
    const collector = await startTestCollector(temp.dir, dbPath === undefined ? {} : { dbPath });
    try {
      const t = msToNs(Date.now());
      const send = async (pidValue: number, total: number, startNs: bigint, timeNs: bigint): Promise<ExportAnswer> => {
        const request = metricsRequest({
          resource: { service: 'svc', extra: pid(pidValue) },
          temporality: CUMULATIVE,
          requests: [requestPoint({ client: 'sdk', count: total, startNs, timeNs })],
        });
        const response = await postMetrics(collector.url, request, { format: 'json' });
        expect(response.status).toBe(200);
        return (await response.json()) as ExportAnswer;
      };
      const startA = t - 20n * MINUTE_NS;
      const startB = t - 19n * MINUTE_NS;
      // A (pid 101) 3 → 8, B (pid 202) 5 → 8, interleaved: 16.
      await send(101, 3, startA, t - 18n * MINUTE_NS);
      await send(202, 5, startB, t - 17n * MINUTE_NS);
      await send(101, 8, startA, t - 16n * MINUTE_NS);
      await send(202, 8, startB, t - 15n * MINUTE_NS);
      // A retry of B's last export adds nothing.
      expect(await send(202, 8, startB, t - 15n * MINUTE_NS)).toEqual({});
      // A restarts and gets pid 101 again: its new life starts later and counts from zero (4, then 10), +10.
      const startA2 = t - 10n * MINUTE_NS;
      await send(101, 4, startA2, t - 9n * MINUTE_NS);
      // A late retry of the first life's last export still lands against that life's total: nothing added.
      await send(101, 8, startA, t - 16n * MINUTE_NS);
      await send(101, 10, startA2, t - 8n * MINUTE_NS);

      expect((await matrix(collector.url)).rows.find((row) => row.client === 'sdk')?.requests).toBe(26);
      expect((await matrix(collector.url, `&instance=${encodeURIComponent('pid:101@host-1')}`)).rows[0]?.requests).toBe(18);
      expect((await matrix(collector.url, `&instance=${encodeURIComponent('pid:202@host-1')}`)).rows[0]?.requests).toBe(8);
      const { body } = await getJson<InstancesAnswer>(`${collector.url}/api/v1/instances`);
      expect(body.instances.map((instance) => [instance.service, instance.instanceId, instance.host]).sort()).toEqual([
        ['svc', 'pid:101@host-1', 'host-1'],
        ['svc', 'pid:202@host-1', 'host-1'],
      ]);

      // Without a start time the lives of one pid could not be told apart: refused, and nothing counted.
      const noStart = await send(303, 7, 0n, t - 5n * MINUTE_NS);
      expect(noStart.partialSuccess?.rejectedDataPoints).toBe('1');
      expect(noStart.partialSuccess?.errorMessage).toMatch(/start_time_unix_nano/);
      expect((await matrix(collector.url)).rows.find((row) => row.client === 'sdk')?.requests).toBe(26);
      expect(await (await fetch(`${collector.url}/metrics`)).text()).toContain(
        'extscope_collector_points_rejected_total{reason="no_start_time",service="svc"} 1',
      );
      const { body: refused } = await getJson<RejectionsAnswer>(`${collector.url}/api/v1/rejections`);
      expect(refused.rejections.map(({ reason, service, points }) => ({ reason, service, points }))).toEqual([
        { reason: 'no_start_time', service: 'svc', points: 1 },
      ]);
    } finally {
      await collector.close();
    }
  });
});
