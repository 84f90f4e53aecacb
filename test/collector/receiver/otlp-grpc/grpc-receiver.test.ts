import { type AddressInfo, createServer } from 'node:net';
import { Metadata, status } from '@grpc/grpc-js';
import { OTLPMetricExporter as GrpcMetricExporter } from '@opentelemetry/exporter-metrics-otlp-grpc';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPTraceExporter as GrpcTraceExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { AggregationTemporalityPreference } from '@opentelemetry/exporter-metrics-otlp-http';
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  ATTR_CLIENT_DECLARATION,
  ATTR_CLIENT_NAME,
  ATTR_CLIENT_VERSION,
  ATTR_EXTENSION_CLIENT_DECLARED,
  ATTR_EXTENSION_ID,
  ATTR_EXTENSION_NEGOTIATED,
  ATTR_EXTENSION_REQUIRED,
  ATTR_EXTENSION_SERVER_DECLARED,
  ATTR_MCP_METHOD_NAME,
  ATTR_SERVER_DECLARATION,
  METRIC_EXTENSION_REQUESTS,
  METRIC_REQUESTS,
} from '../../../../contract/index.js';
import { MetricsResponse } from '../../../../collector/otlp/proto-root.js';
import { type TestCollector, matrix, spawnCollector, startTestCollector, tableCount, tempDir } from '../../helpers/collector.js';
import { MINUTE_NS, encodeMetrics, metricsRequest, msToNs, postMetrics, requestPoint } from '../../helpers/otlp.js';
import { METRICS_EXPORT, TRACES_EXPORT, bearer, rawClient, retryDelaySeconds } from './helpers.js';
import { wideExport } from '../../../faults/big-export.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const TOKEN = 'grpc-test-ingest-token-0123456789';

function record(provider: MeterProvider, requests: number, tasks: number): void {
  const meter = provider.getMeter('extscope-test');
  const base = {
    [ATTR_MCP_METHOD_NAME]: 'tools/call',
    [ATTR_CLIENT_NAME]: 'sdk-client',
    [ATTR_CLIENT_VERSION]: '3.1',
    [ATTR_CLIENT_DECLARATION]: 'declared',
    [ATTR_SERVER_DECLARATION]: 'declared',
  };
  meter.createCounter(METRIC_REQUESTS).add(requests, base);
  meter.createCounter(METRIC_EXTENSION_REQUESTS).add(tasks, {
    ...base,
    [ATTR_EXTENSION_ID]: TASKS,
    [ATTR_EXTENSION_CLIENT_DECLARED]: true,
    [ATTR_EXTENSION_SERVER_DECLARED]: true,
    [ATTR_EXTENSION_NEGOTIATED]: true,
    [ATTR_EXTENSION_REQUIRED]: false,
  });
}

function provider(instance: string, exporter: PushMetricExporter): MeterProvider {
  return new MeterProvider({
    resource: resourceFromAttributes({ 'service.name': 'sdk-svc', 'service.instance.id': instance }),
    readers: [new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })],
  });
}

function grpcExporter(address: string, options: { temporality: AggregationTemporalityPreference; gzip?: boolean; token?: string }): GrpcMetricExporter {
  const metadata = new Metadata();
  if (options.token !== undefined) metadata.set('authorization', `Bearer ${options.token}`);
  return new GrpcMetricExporter({
    url: `http://${address}`,
    temporalityPreference: options.temporality,
    compression: options.gzip === true ? CompressionAlgorithm.GZIP : CompressionAlgorithm.NONE,
    metadata,
  });
}

/** The value of one sample of the collector's `/metrics`, 0 when absent. */
async function sample(url: string, line: RegExp): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const match = new RegExp(`^${line.source} (\\d+)$`, 'm').exec(text);
  return match === null ? 0 : Number(match[1]);
}

const now = (): bigint => msToNs(Date.now());

describe('OTLP/gRPC receiver fed by the OpenTelemetry JS gRPC exporters', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await temp.cleanup();
  });

  it('counts delta (gzip) and cumulative (repeated, restarted) gRPC senders and an OTLP/HTTP sender together, exactly', async () => {
    const collector = await startTestCollector(temp.dir);
    const address = collector.grpcAddress;
    expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
    if (address === undefined) throw new Error('no gRPC receiver');

    // gRPC, delta, gzip: two collections, 5 + 2 requests, 4 + 1 negotiated.
    const delta = provider('grpc-delta', grpcExporter(address, { temporality: AggregationTemporalityPreference.DELTA, gzip: true }));
    record(delta, 5, 4);
    await delta.forceFlush();
    record(delta, 2, 1);
    await delta.shutdown();

    // gRPC, cumulative: a total sent twice (as a retry would), then a restarted process starting from zero.
    const first = provider('grpc-cumulative', grpcExporter(address, { temporality: AggregationTemporalityPreference.CUMULATIVE }));
    record(first, 3, 2);
    await first.forceFlush();
    await first.forceFlush();
    await first.shutdown();
    const second = provider('grpc-cumulative', grpcExporter(address, { temporality: AggregationTemporalityPreference.CUMULATIVE }));
    record(second, 1, 1);
    await second.shutdown();

    // OTLP/HTTP (protobuf), the same client: one row with both.
    const http = provider(
      'http-delta',
      new ProtoMetricExporter({ url: `${collector.url}/v1/metrics`, temporalityPreference: AggregationTemporalityPreference.DELTA }),
    );
    record(http, 4, 3);
    await http.shutdown();

    const view = await matrix(collector.url, '&group=client_version');
    expect(view.rows).toHaveLength(1);
    expect(view.rows[0]).toMatchObject({ requests: 15, declaration: { unknown: 0, none: 0, declared: 15 } });
    expect(view.rows[0]?.extensions).toEqual([{ id: TASKS, clientDeclared: 11, serverAdvertised: 11, negotiated: 11, serverUnknown: 0 }]);

    // Each protocol's exports are counted under its own label, none refused.
    expect(await sample(collector.url, /extscope_collector_exports_total\{signal="metrics",result="accepted",protocol="grpc"\}/)).toBeGreaterThanOrEqual(3);
    expect(await sample(collector.url, /extscope_collector_exports_total\{signal="metrics",result="accepted",protocol="http"\}/)).toBeGreaterThanOrEqual(1);
    expect(await (await fetch(`${collector.url}/metrics`)).text()).not.toMatch(/^extscope_collector_exports_refused_total\{/m);
    await collector.close();
  });

  it('takes spans from the gRPC trace exporter', async () => {
    const collector = await startTestCollector(temp.dir);
    const tracer = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'sdk-svc', 'service.instance.id': 'traces-1' }),
      spanProcessors: [new SimpleSpanProcessor(new GrpcTraceExporter({ url: `http://${collector.grpcAddress}` }))],
    });
    const span = tracer.getTracer('extscope-test').startSpan('tools/call echo', { attributes: { [ATTR_MCP_METHOD_NAME]: 'tools/call' } });
    span.end();
    await tracer.forceFlush();
    await tracer.shutdown();
    expect(await sample(collector.url, /extscope_collector_exports_total\{signal="traces",result="accepted",protocol="grpc"\}/)).toBe(1);
    await collector.close();
  });

  it('a wrong or missing token is UNAUTHENTICATED and stores nothing; the right one in metadata is counted', async () => {
    const collector = await startTestCollector(temp.dir, { ingestToken: TOKEN });
    const address = collector.grpcAddress ?? '';
    const wrong = provider('wrong', grpcExporter(address, { temporality: AggregationTemporalityPreference.DELTA, token: 'not-the-token-0123456789' }));
    record(wrong, 5, 5);
    await wrong.shutdown();
    const client = rawClient(address, METRICS_EXPORT);
    const bare = await client.call(
      encodeMetrics(metricsRequest({ requests: [requestPoint({ client: 'x', count: 1, startNs: now() - MINUTE_NS, timeNs: now() })] })),
    );
    client.close();
    expect(bare.code).toBe(status.UNAUTHENTICATED);
    expect(bare.details).toMatch(/bearer token/);
    expect((await matrix(collector.url)).rows).toEqual([]);
    expect(await sample(collector.url, /extscope_collector_exports_refused_total\{signal="metrics",reason="unauthorized",protocol="grpc"\}/)).toBe(2);

    const right = provider('right', grpcExporter(address, { temporality: AggregationTemporalityPreference.DELTA, token: TOKEN }));
    record(right, 6, 2);
    await right.shutdown();
    expect((await matrix(collector.url)).rows.map((row) => [row.client, row.requests])).toEqual([['sdk-client', 6]]);
    await collector.close();
  });

  it('a gRPC port already in use stops the start, naming the address', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    try {
      await expect(startTestCollector(temp.dir, { grpcPort: port })).rejects.toThrow(`the OTLP/gRPC receiver cannot listen on 127.0.0.1:${port}`);
    } finally {
      busy.close();
    }
  });

  it('the CLI listens on --grpc-port, and not at all with off', async () => {
    const on = await spawnCollector(`${temp.dir}/on.db`, ['--grpc-port', '0']);
    const listening = /"grpc":"(127\.0\.0\.1:\d+)"/.exec(on.output.join(''))?.[1];
    expect(listening).toBeDefined();
    const client = rawClient(listening ?? '', METRICS_EXPORT);
    expect((await client.call(Buffer.from([0xff, 0xff]))).code).toBe(status.INVALID_ARGUMENT);
    client.close();
    on.child.kill('SIGTERM');
    expect((await on.exited).code).toBe(0);

    const off = await spawnCollector(`${temp.dir}/off.db`, [], { EXTSCOPE_GRPC_PORT: 'off' });
    expect(off.output.join('')).toMatch(/"grpc":null/);
    off.child.kill('SIGTERM');
    expect((await off.exited).code).toBe(0);
  });
});

describe('OTLP/gRPC bad input: the status the OTLP specification asks for, nothing stored', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;
  let address: string;

  beforeAll(async () => {
    temp = await tempDir();
    collector = await startTestCollector(temp.dir, {
      ingestToken: TOKEN,
      limits: { maxBodyBytes: 64 * 1024, maxInFlightExports: 1, maxAuthFailuresPerMinute: 3 },
    });
    address = collector.grpcAddress ?? '';
  });
  afterAll(async () => {
    await collector.close();
    // Only the good exports are stored (the retried one once): every refused one left nothing behind.
    for (const [table, count] of Object.entries({ series: 2, streams: 2, point_log: 2 })) expect(tableCount(collector.dbPath, table), table).toBe(count);
    await temp.cleanup();
  });

  const call = async (path: string, message: Buffer, metadata = bearer(TOKEN), options: Record<string, unknown> = {}) => {
    const client = rawClient(address, path, options);
    try {
      return await client.call(message, metadata);
    } finally {
      client.close();
    }
  };

  it('a malformed message is INVALID_ARGUMENT', async () => {
    const answer = await call(METRICS_EXPORT, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]));
    expect(answer.code).toBe(status.INVALID_ARGUMENT);
    expect(answer.details).toMatch(/malformed protobuf/);
    expect(retryDelaySeconds(answer.metadata)).toBeUndefined();
  });

  it('a message over the size limit, and a gzip message inflating past it, are RESOURCE_EXHAUSTED without RetryInfo (not retryable)', async () => {
    const large = await call(METRICS_EXPORT, Buffer.alloc(80 * 1024, 0x20));
    expect(large.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(retryDelaySeconds(large.metadata)).toBeUndefined();
    // 1 MiB of zeros is about 1 KiB gzipped: small on the wire, past the limit once inflated.
    const bomb = await call(METRICS_EXPORT, Buffer.alloc(1024 * 1024), bearer(TOKEN), { 'grpc.default_compression_algorithm': 2 });
    expect(bomb.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(bomb.details).toMatch(/decompresses to a size larger than/);
    expect(retryDelaySeconds(bomb.metadata)).toBeUndefined();
    // Refused by grpc-js before the handler saw them: still counted, and their admission slots given back.
    expect(await sample(collector.url, /extscope_collector_exports_refused_total\{signal="metrics",reason="not_received",protocol="grpc"\}/)).toBe(2);
    expect(await sample(collector.url, /extscope_collector_exports_in_flight/)).toBe(0);
  });

  it('an unknown service or method is UNIMPLEMENTED', async () => {
    expect((await call('/opentelemetry.proto.collector.metrics.v1.MetricsService/Nope', Buffer.alloc(0))).code).toBe(status.UNIMPLEMENTED);
    expect((await call('/opentelemetry.proto.collector.logs.v1.LogsService/Export', Buffer.alloc(0))).code).toBe(status.UNIMPLEMENTED);
  });

  it('points refused one by one come back as partial_success', async () => {
    const old = now() - 7n * 60n * MINUTE_NS;
    const request = metricsRequest({
      resource: { instance: 'i-1' },
      requests: [requestPoint({ client: 'alpha', count: 1, startNs: old - MINUTE_NS, timeNs: old })],
    });
    const answer = await call(METRICS_EXPORT, encodeMetrics(request));
    expect(answer.code).toBe(status.OK);
    expect(MetricsResponse.toObject(MetricsResponse.decode(answer.response ?? Buffer.alloc(0)), { longs: String })).toEqual({
      partialSuccess: { rejectedDataPoints: '1', errorMessage: expect.stringMatching(/older than 6 h/) },
    });
  });

  it("the collector's own metrics count each export once, whether it fails in the consume or is answered with partial_success, on OTLP/gRPC and OTLP/HTTP", async () => {
    const malformed = Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]);
    const old = now() - 7n * 60n * MINUTE_NS;
    const partlyRefused = encodeMetrics(
      metricsRequest({ resource: { instance: 'i-1' }, requests: [requestPoint({ client: 'alpha', count: 1, startNs: old - MINUTE_NS, timeNs: old })] }),
    );
    const exports = (result: string, protocol: string): RegExp =>
      new RegExp(`extscope_collector_exports_total\\{signal="metrics",result="${result}",protocol="${protocol}"\\}`);
    const refusals = (protocol: string): RegExp =>
      new RegExp(`extscope_collector_exports_refused_total\\{signal="metrics",reason="malformed",protocol="${protocol}"\\}`);
    for (const protocol of ['grpc', 'http'] as const) {
      const before = {
        rejected: await sample(collector.url, exports('rejected', protocol)),
        partial: await sample(collector.url, exports('partial', protocol)),
        refused: await sample(collector.url, refusals(protocol)),
      };
      if (protocol === 'grpc') {
        expect((await call(METRICS_EXPORT, malformed)).code).toBe(status.INVALID_ARGUMENT);
        expect((await call(METRICS_EXPORT, partlyRefused)).code).toBe(status.OK);
      } else {
        expect((await postMetrics(collector.url, undefined, { body: malformed, token: TOKEN })).status).toBe(400);
        expect((await postMetrics(collector.url, undefined, { body: partlyRefused, token: TOKEN })).status).toBe(200);
      }
      expect(await sample(collector.url, exports('rejected', protocol))).toBe(before.rejected + 1);
      expect(await sample(collector.url, refusals(protocol))).toBe(before.refused + 1);
      expect(await sample(collector.url, exports('partial', protocol))).toBe(before.partial + 1);
    }
  });

  it('past the in-flight limit (shared with OTLP/HTTP) an export is RESOURCE_EXHAUSTED with RetryInfo', async () => {
    // A collector of its own (this one's body limit is small, and its table counts are asserted): a large OTLP/HTTP
    // export (20,000 points) holds the only slot while it is decoded and stored, over a second here.
    const own = await startTestCollector(temp.dir, { dbPath: `${temp.dir}/in-flight.db`, ingestToken: TOKEN, limits: { maxInFlightExports: 1 } });
    try {
      const held = postMetrics(own.url, undefined, { token: TOKEN, body: wideExport(20_000, { instance: 'wide', clients: 1 }).body });
      for (let attempt = 0; attempt < 400 && (await sample(own.url, /extscope_collector_exports_in_flight/)) < 1; attempt++)
        await new Promise((resolve) => setTimeout(resolve, 25));
      expect(await sample(own.url, /extscope_collector_exports_in_flight/)).toBe(1);
      const client = rawClient(own.grpcAddress ?? '', METRICS_EXPORT);
      const answer = await client.call(Buffer.alloc(0), bearer(TOKEN));
      client.close();
      expect(answer.code).toBe(status.RESOURCE_EXHAUSTED);
      expect(retryDelaySeconds(answer.metadata)).toBe(1);
      expect(await sample(own.url, /extscope_collector_exports_refused_total\{signal="metrics",reason="overloaded",protocol="grpc"\}/)).toBe(1);
      expect((await held).status).toBe(200);
      expect(await sample(own.url, /extscope_collector_exports_in_flight/)).toBe(0);
    } finally {
      await own.close();
    }
  });

  it('a retried export is counted once, also when the retry comes over OTLP/HTTP', async () => {
    const t = now();
    const bytes = encodeMetrics(
      metricsRequest({ resource: { instance: 'retry-1' }, requests: [requestPoint({ client: 'retried', count: 4, startNs: t - MINUTE_NS, timeNs: t })] }),
    );
    expect((await call(METRICS_EXPORT, bytes)).code).toBe(status.OK);
    expect((await call(METRICS_EXPORT, bytes)).code).toBe(status.OK);
    const http = await fetch(`${collector.url}/v1/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', authorization: `Bearer ${TOKEN}` },
      body: bytes,
    });
    expect(http.status).toBe(200);
    expect((await matrix(collector.url)).rows.map((row) => [row.client, row.requests])).toEqual([['retried', 4]]);
    expect(await sample(collector.url, /extscope_collector_points_total\{result="duplicate"\}/)).toBe(2);
  });

  it('repeated wrong tokens are told to wait (RESOURCE_EXHAUSTED with RetryInfo); then good data is taken', async () => {
    const answers = [];
    for (let attempt = 0; attempt < 4; attempt++) answers.push(await call(METRICS_EXPORT, Buffer.alloc(0), bearer('wrong-token-0123456789')));
    expect(answers.slice(0, 3).map((answer) => answer.code)).toEqual([status.UNAUTHENTICATED, status.UNAUTHENTICATED, status.UNAUTHENTICATED]);
    expect(answers[3]?.code).toBe(status.RESOURCE_EXHAUSTED);
    expect(retryDelaySeconds(answers[3]?.metadata)).toBeGreaterThanOrEqual(1);
    // The process is alive and takes good data.
    const good = await call(
      METRICS_EXPORT,
      encodeMetrics(
        metricsRequest({ resource: { instance: 'i-1' }, requests: [requestPoint({ client: 'alpha', count: 2, startNs: now() - MINUTE_NS, timeNs: now() })] }),
      ),
    );
    expect(good.code).toBe(status.OK);
    expect((await matrix(collector.url)).rows.map((row) => [row.client, row.requests])).toEqual([
      ['retried', 4],
      ['alpha', 2],
    ]);
    // No admission slot was leaked by any refusal.
    expect(await sample(collector.url, /extscope_collector_exports_in_flight/)).toBe(0);
  });

  it('the trace service answers the same way', async () => {
    expect((await call(TRACES_EXPORT, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 0x01]))).code).toBe(status.INVALID_ARGUMENT);
  });
});
