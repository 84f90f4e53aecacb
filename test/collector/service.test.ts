import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findMigrationsDir, loadMigrations } from '../../collector/store/common/migrations.js';
import { getJson, matrix, spawnCollector, startTestCollector, tempDir } from './helpers/collector.js';
import { eventually } from '../support/eventually.js';
import { MINUTE_NS, encodeMetrics, metricsRequest, msToNs, postMetrics, requestPoint } from './helpers/otlp.js';
import { wideExport } from '../faults/big-export.js';

function exportBytes(client: string, count: number): Buffer {
  const t = msToNs(Date.now());
  return encodeMetrics(metricsRequest({ resource: { instance: 'i-1' }, requests: [requestPoint({ client, count, startNs: t - MINUTE_NS, timeNs: t })] }));
}

/** Starts an export and sends only the first half of its body; `finish()` sends the rest. */
function halfSent(url: string, body: Buffer): { response: Promise<{ status: number; body: string }>; finish(): void } {
  const request = httpRequest(`${url}/v1/metrics`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf', 'content-length': String(body.length) },
  });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    request.on('error', reject);
  });
  const half = Math.floor(body.length / 2);
  request.write(body.subarray(0, half));
  return { response, finish: () => request.end(body.subarray(half)) };
}

/** Resolves once the collector's gauge `name` reads `count` (bounded wait). */
async function gauge(url: string, name: string, count: number): Promise<void> {
  for (let attempt = 0; attempt < 400; attempt++) {
    const text = await (await fetch(`${url}/metrics`)).text();
    if (new RegExp(`^${name} ${count}$`, 'm').test(text)) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`never saw ${name} ${count}`);
}

/** Resolves once the collector reports `count` exports holding a slot (arrived in full, being stored). */
const inFlight = (url: string, count: number) => gauge(url, 'extscope_collector_exports_in_flight', count);

describe('operations', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await temp.cleanup();
  });

  it('under overload it answers 503 with Retry-After before reading the body, and recovers', async () => {
    const collector = await startTestCollector(temp.dir, { limits: { maxInFlightExports: 2 } });
    try {
      // Two large exports (20,000 points each, about 7 MB) take their slots once they have arrived and hold them
      // for as long as they are decoded and stored (over a second each here): the collector is saturated.
      const large = [wideExport(20_000, { instance: 'wide-a', clients: 1 }), wideExport(20_000, { instance: 'wide-b', clients: 1 })];
      const held = large.map(({ body }) => postMetrics(collector.url, undefined, { body }));
      await inFlight(collector.url, 2);
      await gauge(collector.url, 'extscope_collector_ingest_saturated', 1);
      const readiness = await getJson<{ reasons: string[] }>(`${collector.url}/readyz`);
      expect(readiness.status).toBe(503);
      expect(readiness.body.reasons).toEqual(['saturated: 2 exports in progress, the limit (EXTSCOPE_MAX_IN_FLIGHT) is 2']);
      const refused = await postMetrics(collector.url, undefined, { body: exportBytes('gamma', 1) });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(Buffer.from(await refused.arrayBuffer()).toString()).toMatch(/too many exports in progress/);
      for (const answer of await Promise.all(held)) expect(answer.status).toBe(200);
      await inFlight(collector.url, 0);
      await gauge(collector.url, 'extscope_collector_ingest_saturated', 0);
      expect((await getJson(`${collector.url}/readyz`)).status).toBe(200);
      expect((await postMetrics(collector.url, undefined, { body: exportBytes('gamma', 1) })).status).toBe(200);
      const view = await matrix(collector.url);
      expect(view.rows.map((row) => [row.client, row.requests]).sort()).toEqual([
        ['client-0', 40_000],
        ['gamma', 1],
      ]);
      expect(await (await fetch(`${collector.url}/metrics`)).text()).toMatch(
        /extscope_collector_exports_total\{signal="metrics",result="throttled",protocol="http"\} 1/,
      );
    } finally {
      await collector.close();
    }
  });

  it('SIGTERM drains: an export in flight is finished and answered, new ones are turned away, the process exits 0 and the data is there after', async () => {
    const dbPath = join(temp.dir, 'drain.db');
    const child = await spawnCollector(dbPath);
    // Half its body sent: it holds no slot yet (it takes one once complete), but it is an export in progress.
    const inflight = halfSent(child.url, exportBytes('alpha', 5));
    await gauge(child.url, 'extscope_collector_exports_receiving', 1);
    child.child.kill('SIGTERM');
    // The signal is handled on the child's event loop: send the next export only once it is draining.
    const draining = await eventually(
      () => child.output.join(''),
      (output) => /SIGTERM: draining in-flight exports/.test(output),
      10_000,
    );
    expect(draining).toMatch(/SIGTERM: draining in-flight exports/);
    // While draining, a new export is refused with a retryable status (or the listener is already gone).
    let refusedStatus: number | string;
    try {
      refusedStatus = (await postMetrics(child.url, undefined, { body: exportBytes('beta', 1) })).status;
    } catch (error) {
      refusedStatus = (error as { cause?: { code?: string } }).cause?.code ?? 'error';
    }
    expect([503, 'ECONNREFUSED', 'ECONNRESET']).toContain(refusedStatus);
    inflight.finish();
    expect((await inflight.response).status).toBe(200);
    expect(await child.exited).toEqual({ code: 0, signal: null });
    expect(child.output.join('')).toMatch(/SIGTERM: draining in-flight exports/);

    const again = await spawnCollector(dbPath);
    try {
      const view = await matrix(again.url);
      expect(view.rows.map((row) => [row.client, row.requests])).toEqual([['alpha', 5]]);
    } finally {
      again.child.kill('SIGINT');
      expect((await again.exited).code).toBe(0);
    }
  });

  it('readyz reports the schema; a second collector on the same database is refused', async () => {
    const collector = await startTestCollector(temp.dir);
    try {
      expect(await getJson(`${collector.url}/readyz`)).toEqual({
        status: 200,
        body: {
          status: 'ready',
          schemaVersion: loadMigrations(findMigrationsDir('sqlite')).at(-1)?.version,
          reasons: [],
          receivers: { otlpHttp: true, otlpGrpc: true },
          exports: { inFlight: 0, limit: 32 },
        },
      });
      await expect(startTestCollector(temp.dir, { dbPath: collector.dbPath })).rejects.toThrow(/in use by another process/);
      // The first one is unaffected.
      expect((await postMetrics(collector.url, undefined, { body: exportBytes('alpha', 1) })).status).toBe(200);
    } finally {
      await collector.close();
    }
  });

  it('/metrics times the retention pass the collector runs at start', async () => {
    const collector = await startTestCollector(temp.dir);
    try {
      // The pass runs beside start-up: scraped until it has finished (bounded).
      let text = '';
      for (let attempt = 0; attempt < 100 && !/extscope_collector_maintenance_duration_seconds_count 1\n/.test(text); attempt++) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50));
        text = await (await fetch(`${collector.url}/metrics`)).text();
      }
      expect(text).toMatch(/extscope_collector_maintenance_duration_seconds_count 1\n/);
      expect(text).toMatch(/extscope_collector_maintenance_duration_seconds_sum \d/);
    } finally {
      await collector.close();
    }
  });

  it('reads the last 7 days once the retention pass at start is over, and /metrics times that read', async () => {
    const collector = await startTestCollector(temp.dir);
    try {
      let text = '';
      for (let attempt = 0; attempt < 100 && !/extscope_collector_warm_up_duration_seconds_count 1\n/.test(text); attempt++) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50));
        text = await (await fetch(`${collector.url}/metrics`)).text();
      }
      expect(text).toMatch(/extscope_collector_warm_up_duration_seconds_count 1\n/);
      expect(text).toMatch(/extscope_collector_warm_up_duration_seconds_sum \d/);
      // Started once the pass was over, and made once: the pass runs again every minute, the warm-up does not.
      expect(text).toMatch(/extscope_collector_maintenance_duration_seconds_count 1\n/);
    } finally {
      await collector.close();
    }
  });

  it('/metrics exposes ingest health and the requests applied as a counter (a retried export not counted twice)', async () => {
    const collector = await startTestCollector(temp.dir);
    try {
      const body = exportBytes('alpha', 3);
      expect((await postMetrics(collector.url, undefined, { body })).status).toBe(200);
      expect((await postMetrics(collector.url, undefined, { body })).status).toBe(200);
      expect((await postMetrics(collector.url, undefined, { body: Buffer.from('nope'), contentType: 'application/json' })).status).toBe(400);
      const response = await fetch(`${collector.url}/metrics`);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      const text = await response.text();
      expect(text).toMatch(/extscope_collector_exports_total\{signal="metrics",result="accepted",protocol="http"\} 2/);
      expect(text).toMatch(/extscope_collector_exports_refused_total\{signal="metrics",reason="malformed",protocol="http"\} 1/);
      expect(text).toMatch(/extscope_collector_points_total\{result="applied"\} 1/);
      expect(text).toMatch(/extscope_collector_points_total\{result="duplicate"\} 1/);
      expect(text).toMatch(/extscope_collector_export_duration_seconds_count\{signal="metrics"\} 2/);
      expect(text).toMatch(/extscope_collector_database_size_bytes [1-9]\d*/);
      expect(text.split('\n').filter((line) => line.startsWith('extscope_requests_total{'))).toEqual([
        'extscope_requests_total{service="svc",client="alpha",client_version="",client_declaration="declared",server_declaration="declared"} 3',
      ]);
      expect(text).not.toMatch(/extscope_matrix_/);
    } finally {
      await collector.close();
    }
  });
});
