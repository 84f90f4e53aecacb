import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { matrix, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { MINUTE_NS, metricsRequest, msToNs, postMetrics, requestPoint } from '../collector/helpers/otlp.js';

const exportFor = (client: string, timeNs: bigint) =>
  metricsRequest({ resource: { service: 'svc', instance: 'i-1' }, requests: [requestPoint({ client, count: 1, startNs: timeNs - MINUTE_NS, timeNs })] });

describe('sender strings are normalised once, at the edge', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await temp.cleanup();
  });

  it('NUL, ESC and RTL-override characters never reach the matrix, its CSV or /metrics', async () => {
    const collector = await startTestCollector(temp.dir);
    try {
      const t = msToNs(Date.now());
      expect((await postMetrics(collector.url, exportFor('evil\u0000\u001b[31m\u202egpj.exe', t))).status).toBe(200);
      const rows = (await matrix(collector.url)).rows;
      expect(rows.map((row) => row.client)).toEqual(['evil\ufffd\ufffd[31m\ufffdgpj.exe']);
      const csv = await (await fetch(`${collector.url}/api/v1/matrix?from=-7d&format=csv`)).text();
      const metrics = await (await fetch(`${collector.url}/metrics`)).text();
      for (const text of [csv, metrics]) for (const character of ['\u0000', '\u001b', '\u202e']) expect(text).not.toContain(character);
      expect(metrics).toContain('evil\ufffd\ufffd[31m\ufffdgpj.exe');
    } finally {
      await collector.close();
    }
  });

  it('a name with a lone surrogate (JSON can carry one) is the same name as with U+FFFD in its place: one row', async () => {
    const collector = await startTestCollector(temp.dir);
    try {
      const t = msToNs(Date.now());
      expect((await postMetrics(collector.url, exportFor('client\ud800', t), { format: 'json' })).status).toBe(200);
      expect((await postMetrics(collector.url, exportFor('client\ufffd', t - MINUTE_NS), { format: 'protobuf' })).status).toBe(200);
      const rows = (await matrix(collector.url)).rows;
      expect(rows.map((row) => [row.client, row.requests])).toEqual([['client\ufffd', 2]]);
    } finally {
      await collector.close();
    }
  });
});
