import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { matrix, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { CUMULATIVE, DELTA, MINUTE_NS, metricsRequest, msToNs, postMetrics, requestPoint } from '../collector/helpers/otlp.js';

interface ExportAnswer {
  partialSuccess?: { rejectedDataPoints?: string; errorMessage?: string };
}

describe('cumulative streams need an instance id', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await temp.cleanup();
  });

  it('two processes sending cumulative totals without service.instance.id are refused point by point (partial success), not mis-counted; with ids they count exactly', async () => {
    const collector = await startTestCollector(temp.dir);
    try {
      const t = msToNs(Date.now());
      const send = (instance: string | undefined, total: number, startNs: bigint, timeNs: bigint, client: string) =>
        postMetrics(
          collector.url,
          metricsRequest({ resource: { service: 'svc', ...(instance === undefined ? {} : { instance }) }, temporality: CUMULATIVE, requests: [requestPoint({ client, count: total, startNs, timeNs })] }),
          { format: 'json' },
        );
      // Process A and process B, interleaved: A 3 → 8, B 5 → 8 (16 requests in all).
      const startA = t - 10n * MINUTE_NS;
      const startB = t - 9n * MINUTE_NS;
      const answers: ExportAnswer[] = [];
      for (const [instance, client] of [[undefined, 'anonymous'], ['a', 'identified']] as const) {
        for (const [who, total, offset] of [['a', 3, 4n], ['b', 5, 3n], ['a', 8, 2n], ['b', 8, 1n]] as const) {
          const id = instance === undefined ? undefined : who;
          const response = await send(id, total, who === 'a' ? startA : startB, t - offset * MINUTE_NS, client);
          expect(response.status).toBe(200);
          if (instance === undefined) answers.push((await response.json()) as ExportAnswer);
        }
      }
      for (const answer of answers) {
        expect(answer.partialSuccess?.rejectedDataPoints).toBe('1');
        expect(answer.partialSuccess?.errorMessage).toMatch(/service\.instance\.id/);
      }
      const rows = (await matrix(collector.url)).rows;
      expect(rows.find((row) => row.client === 'anonymous')).toBeUndefined();
      expect(rows.find((row) => row.client === 'identified')?.requests).toBe(16);

      // Delta points need no instance id: each is an increment of its own.
      const delta = metricsRequest({ resource: { service: 'svc' }, temporality: DELTA, requests: [requestPoint({ client: 'delta', count: 2, startNs: t - MINUTE_NS, timeNs: t })] });
      expect((await postMetrics(collector.url, delta)).status).toBe(200);
      expect((await matrix(collector.url)).rows.find((row) => row.client === 'delta')?.requests).toBe(2);
    } finally {
      await collector.close();
    }
  });
});
