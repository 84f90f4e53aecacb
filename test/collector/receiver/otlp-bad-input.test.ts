import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricsResponse } from '../../../collector/otlp/proto-root.js';
import { type TestCollector, getJson, matrix, startTestCollector, tableCount, tempDir } from '../helpers/collector.js';
import { type Json, MINUTE_NS, attribute, encodeMetrics, extensionPoint, metricsRequest, msToNs, postMetrics, requestPoint } from '../helpers/otlp.js';

const now = (): bigint => msToNs(Date.now());

function valid(client = 'alpha', count = 3): Json {
  const t = now();
  return metricsRequest({
    resource: { instance: 'i-1' },
    requests: [requestPoint({ client, count, startNs: t - MINUTE_NS, timeNs: t })],
  });
}

function withRequests(...points: Json[]): Json {
  return metricsRequest({ resource: { instance: 'i-1' }, requests: points });
}

function point(overrides: Partial<Parameters<typeof requestPoint>[0]> = {}): Json {
  const t = now();
  return requestPoint({ client: 'alpha', count: 1, startNs: t - MINUTE_NS, timeNs: t, ...overrides });
}

async function statusMessage(response: Response): Promise<string> {
  const bytes = Buffer.from(await response.arrayBuffer());
  if (response.headers.get('content-type')?.startsWith('application/json')) return (JSON.parse(bytes.toString()) as { message: string }).message;
  // google.rpc.Status in protobuf: the message is a UTF-8 string field; reading the text is enough here.
  return bytes.toString('utf8');
}

describe('bad input: a clear 4xx, the process alive, nothing stored', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;

  beforeAll(async () => {
    temp = await tempDir();
    collector = await startTestCollector(temp.dir, { limits: { maxBodyBytes: 512 * 1024 } });
  });
  afterAll(async () => {
    await collector.close();
    // Only the last test's one good point is stored: every refused export left nothing behind.
    const expected = { instances: 1, series: 1, streams: 1, point_log: 1, series_minute: 1, cells: 2, cell_minute: 2, cumulative_state: 0 };
    for (const [table, count] of Object.entries(expected)) expect(tableCount(collector.dbPath, table), table).toBe(count);
    await temp.cleanup();
  });

  async function expectRefused(response: Response, status: number, message: RegExp): Promise<void> {
    expect(response.status).toBe(status);
    expect(await statusMessage(response)).toMatch(message);
    expect((await matrix(collector.url)).rows).toEqual([]);
    expect((await getJson<{ instances: unknown[] }>(`${collector.url}/api/v1/instances`)).body.instances).toEqual([]);
    expect((await fetch(`${collector.url}/healthz`)).status).toBe(200);
  }

  it('a truncated protobuf body is a 400', async () => {
    const bytes = encodeMetrics(valid());
    await expectRefused(await postMetrics(collector.url, undefined, { body: bytes.subarray(0, bytes.length - 7) }), 400, /malformed protobuf/);
  });

  it('an unknown or missing content type is a 415, an unknown content encoding too', async () => {
    await expectRefused(await postMetrics(collector.url, valid(), { contentType: 'text/plain' }), 415, /Content-Type must be/);
    const response = await fetch(`${collector.url}/v1/metrics`, { method: 'POST', body: encodeMetrics(valid()) });
    await expectRefused(response, 415, /Content-Type must be/);
    const brotli = await fetch(`${collector.url}/v1/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'br' },
      body: encodeMetrics(valid()),
    });
    await expectRefused(brotli, 415, /Content-Encoding/);
  });

  it('invalid JSON, a JSON array, and ill-typed OTLP/JSON fields are 400s', async () => {
    await expectRefused(await postMetrics(collector.url, undefined, { format: 'json', body: '{"resourceMetrics": [' }), 400, /invalid JSON/);
    await expectRefused(await postMetrics(collector.url, undefined, { format: 'json', body: '[]' }), 400, /JSON object/);
    const badTime = JSON.stringify(valid()).replace(/"timeUnixNano":"\d+"/, '"timeUnixNano":"soon"');
    await expectRefused(await postMetrics(collector.url, undefined, { format: 'json', body: badTime }), 400, /timeUnixNano/);
  });

  it('a gzip bomb is a 413, not an out-of-memory', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(512 * 1024);
    const gzipped = await fetch(`${collector.url}/v1/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' },
      body: bomb,
    });
    await expectRefused(gzipped, 413, /decompresses to more than/);
    const notGzip = await fetch(`${collector.url}/v1/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' },
      body: encodeMetrics(valid()),
    });
    await expectRefused(notGzip, 400, /not valid gzip/);
  });

  it('a body over the size limit is a 413, whether announced by Content-Length or streamed', async () => {
    const big = Buffer.alloc(600 * 1024, 1);
    await expectRefused(await postMetrics(collector.url, undefined, { body: big }), 413, /larger than/);
    const status = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(`${collector.url}/v1/metrics`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on('error', reject);
      // Chunked, no Content-Length: the limit applies while reading.
      for (let i = 0; i < 10; i++) request.write(Buffer.alloc(64 * 1024, 1));
      request.end();
    });
    expect(status).toBe(413);
  });

  it('huge strings in kept attributes are 400s', async () => {
    const huge = 'x'.repeat(100_000);
    await expectRefused(
      await postMetrics(collector.url, withRequests(point({ client: huge }))),
      400,
      /extscope\.client\.name is 100000 characters long; the limit is 256/,
    );
    const t = now();
    const hugeId = metricsRequest({
      resource: { instance: 'i-1' },
      extensions: [extensionPoint({ count: 1, startNs: t - MINUTE_NS, timeNs: t, id: `com.example/${huge}`, clientDeclared: true, serverDeclared: true })],
    });
    await expectRefused(await postMetrics(collector.url, hugeId, { format: 'json' }), 400, /extscope\.extension\.id is/);
    const hugeService = metricsRequest({ resource: { instance: 'i-1', service: huge }, requests: [point()] });
    await expectRefused(await postMetrics(collector.url, hugeService), 400, /service\.name is 100000 characters/);
  });

  it('negative, NaN, infinite and fractional counts are 400s, and a bad point refuses its whole export', async () => {
    await expectRefused(await postMetrics(collector.url, withRequests(point({ count: -5 }))), 400, /negative/);
    await expectRefused(await postMetrics(collector.url, withRequests(point({ asDouble: Number.NaN }))), 400, /NaN/);
    const nanJson = JSON.stringify(withRequests(point({ asDouble: 1 }))).replace('"asDouble":1', '"asDouble":"NaN"');
    await expectRefused(await postMetrics(collector.url, undefined, { format: 'json', body: nanJson }), 400, /NaN/);
    await expectRefused(await postMetrics(collector.url, withRequests(point({ asDouble: Number.POSITIVE_INFINITY }))), 400, /Infinity/);
    await expectRefused(await postMetrics(collector.url, withRequests(point({ asDouble: 2.5 }))), 400, /whole number/);
    await expectRefused(await postMetrics(collector.url, withRequests(point({ client: 'fine' }), point({ count: -1 }))), 400, /negative/);
  });

  it('timestamps far in the future, missing, or a start after the end are 400s', async () => {
    const tomorrow = now() + 24n * 60n * MINUTE_NS;
    await expectRefused(
      await postMetrics(collector.url, withRequests(point({ startNs: tomorrow - MINUTE_NS, timeNs: tomorrow }))),
      400,
      /ahead of the collector's clock/,
    );
    const farFuture = 18_000_000_000_000_000_000n; // beyond int64 nanoseconds
    await expectRefused(await postMetrics(collector.url, withRequests(point({ startNs: 0n, timeNs: farFuture }))), 400, /ahead/);
    await expectRefused(await postMetrics(collector.url, withRequests(point({ timeNs: 0n, startNs: 0n }))), 400, /no time_unix_nano/);
    const t = now();
    await expectRefused(await postMetrics(collector.url, withRequests(point({ startNs: t, timeNs: t - MINUTE_NS }))), 400, /after time_unix_nano/);
  });

  it('contract violations are 400s: a missing or unknown declaration state, a mistyped flag, a false "negotiated"', async () => {
    const noDeclaration = withRequests(point());
    const attributes = ((noDeclaration['resourceMetrics'] as Json[])[0] as { scopeMetrics: { metrics: { sum: { dataPoints: { attributes: Json[] }[] } }[] }[] })
      .scopeMetrics[0]?.metrics[0]?.sum.dataPoints[0]?.attributes;
    attributes?.splice(
      attributes.findIndex((a) => a['key'] === 'extscope.client.declaration'),
      1,
    );
    await expectRefused(await postMetrics(collector.url, noDeclaration), 400, /extscope\.client\.declaration must be one of unknown, none, declared/);
    await expectRefused(await postMetrics(collector.url, withRequests(point({ declaration: 'maybe' as 'none' }))), 400, /must be one of/);
    const t = now();
    const mistyped = metricsRequest({
      resource: { instance: 'i-1' },
      extensions: [extensionPoint({ count: 1, startNs: t - MINUTE_NS, timeNs: t, id: 'com.example/a', clientDeclared: true, serverDeclared: true, extra: [] })],
    });
    const text = JSON.stringify(mistyped).replace(
      '{"key":"extscope.extension.client_declared","value":{"boolValue":true}}',
      '{"key":"extscope.extension.client_declared","value":{"intValue":"1"}}',
    );
    await expectRefused(await postMetrics(collector.url, undefined, { format: 'json', body: text }), 400, /must be a boolean/);
    const falseNegotiation = metricsRequest({
      resource: { instance: 'i-1' },
      extensions: [
        extensionPoint({ count: 1, startNs: t - MINUTE_NS, timeNs: t, id: 'com.example/a', clientDeclared: true, serverDeclared: false, negotiated: true }),
      ],
    });
    await expectRefused(await postMetrics(collector.url, falseNegotiation), 400, /negotiated is true but/);
  });

  it('metrics and points it does not know are ignored and counted, not errors', async () => {
    const t = now();
    const request = metricsRequest({
      resource: { instance: 'i-1' },
      other: [
        { name: 'http.server.duration', sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: [{ timeUnixNano: String(t), asInt: '4' }] } },
        {
          name: 'extscope.requests',
          gauge: { dataPoints: [{ timeUnixNano: String(t), asInt: '4', attributes: [attribute('extscope.client.declaration', 'none')] }] },
        },
      ],
    });
    const response = await postMetrics(collector.url, request);
    expect(response.status).toBe(200);
    expect(MetricsResponse.toObject(MetricsResponse.decode(Buffer.from(await response.arrayBuffer())))).toEqual({});
    expect((await matrix(collector.url)).rows).toEqual([]);
    const exposition = await (await fetch(`${collector.url}/metrics`)).text();
    expect(exposition).toMatch(/extscope_collector_points_ignored_total\{reason="unknown_metric"\} 1/);
    expect(exposition).toMatch(/extscope_collector_points_ignored_total\{reason="unsupported_type"\} 1/);
  });

  it('points older than the dedup window are refused one by one, as partial success, in the request encoding', async () => {
    const old = now() - 7n * 60n * MINUTE_NS;
    const request = withRequests(point({ startNs: old - MINUTE_NS, timeNs: old }), point({ startNs: old - 2n * MINUTE_NS, timeNs: old - MINUTE_NS }));
    const protobuf = await postMetrics(collector.url, request);
    expect(protobuf.status).toBe(200);
    expect(MetricsResponse.toObject(MetricsResponse.decode(Buffer.from(await protobuf.arrayBuffer())), { longs: String })).toEqual({
      partialSuccess: { rejectedDataPoints: '2', errorMessage: expect.stringMatching(/older than 6 h/) },
    });
    const json = await postMetrics(collector.url, request, { format: 'json' });
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await json.json()).toEqual({ partialSuccess: { rejectedDataPoints: '2', errorMessage: expect.stringMatching(/older than/) } });
    expect((await matrix(collector.url)).rows).toEqual([]);
  });

  it('after all of it the process is alive, ready, and takes good data', async () => {
    expect((await fetch(`${collector.url}/readyz`)).status).toBe(200);
    expect((await postMetrics(collector.url, valid('omega', 2))).status).toBe(200);
    expect((await matrix(collector.url)).rows.map((row) => [row.client, row.requests])).toEqual([['omega', 2]]);
  });
});
