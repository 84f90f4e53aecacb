import { join } from 'node:path';
import { AggregationTemporalityPreference, OTLPMetricExporter as JsonExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
} from '../../contract/index.js';
import { dumpRollups, matrix, startTestCollector, tempDir } from './helpers/collector.js';
import {
  CUMULATIVE,
  DELTA,
  type ExtensionSpec,
  type Json,
  MINUTE_NS,
  type RequestSpec,
  extensionPoint,
  metricsRequest,
  msToNs,
  postMetrics,
  requestPoint,
} from './helpers/otlp.js';

type Stream = Omit<RequestSpec, 'count' | 'startNs' | 'timeNs'> | Omit<ExtensionSpec, 'count' | 'startNs' | 'timeNs'>;

const TASKS = 'io.modelcontextprotocol/tasks';
const REPLAY = 'com.example/replay';

/** Three one-minute windows of one instance's traffic: per stream, the increments of each window. */
const STREAMS: { stream: Stream; deltas: [number, number, number] }[] = [
  { stream: { client: 'alpha', version: '1.0', declaration: 'declared' }, deltas: [3, 4, 2] },
  { stream: { client: 'beta', version: '2.0', declaration: 'none' }, deltas: [2, 0, 5] },
  { stream: { declaration: 'unknown' }, deltas: [1, 1, 1] },
  { stream: { client: 'alpha', version: '1.0', id: TASKS, clientDeclared: true, serverDeclared: true }, deltas: [3, 4, 2] },
  { stream: { client: 'alpha', version: '1.0', id: REPLAY, clientDeclared: true, serverDeclared: false }, deltas: [3, 4, 0] },
  { stream: { client: 'beta', version: '2.0', id: TASKS, clientDeclared: false, serverDeclared: true }, deltas: [2, 0, 5] },
];

function isExtension(stream: Stream): stream is Omit<ExtensionSpec, 'count' | 'startNs' | 'timeNs'> {
  return 'id' in stream;
}

function build(temporality: number, values: (deltas: [number, number, number]) => number, startNs: bigint, timeNs: bigint): Json {
  const requests: Json[] = [];
  const extensions: Json[] = [];
  for (const { stream, deltas } of STREAMS) {
    const spec = { ...stream, count: values(deltas), startNs, timeNs };
    if (isExtension(stream)) extensions.push(extensionPoint(spec as ExtensionSpec));
    else requests.push(requestPoint(spec));
  }
  return metricsRequest({ resource: { service: 'svc', instance: 'instance-1' }, temporality, requests, extensions });
}

describe('the same traffic, sent different ways, gives the same rollups', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await temp.cleanup();
  });

  const base = msToNs(Math.floor(Date.now() / 60_000) * 60_000 - 10 * 60_000);
  const windowEnd = (window: number): bigint => base + BigInt(window + 1) * MINUTE_NS + 5_000_000_000n;
  const windowStart = (window: number): bigint => (window === 0 ? base : windowEnd(window - 1));

  /** The period asked for ends when each run reads ("the last 7 days"): compare what was counted in it. */
  function withoutPeriod(view: Awaited<ReturnType<typeof matrix>>): Omit<typeof view, 'from' | 'to'> {
    const { from: _from, to: _to, ...counts } = view;
    return counts;
  }

  async function deltaRun(name: string, format: 'protobuf' | 'json', gzip: boolean): Promise<{ rollups: string[]; matrix: unknown }> {
    const collector = await startTestCollector(temp.dir, { dbPath: join(temp.dir, `${name}.db`) });
    for (const window of [0, 1, 2]) {
      const request = build(DELTA, (deltas) => deltas[window] ?? 0, windowStart(window), windowEnd(window));
      expect((await postMetrics(collector.url, request, { format, gzip })).status).toBe(200);
    }
    const view = withoutPeriod(await matrix(collector.url, '&group=client_version'));
    await collector.close();
    return { rollups: dumpRollups(collector.dbPath), matrix: view };
  }

  it('protobuf, JSON and gzipped JSON delta exports, and cumulative exports across a restart, agree exactly', async () => {
    const protobuf = await deltaRun('protobuf', 'protobuf', false);
    const json = await deltaRun('json', 'json', false);
    const gzipped = await deltaRun('gzip', 'json', true);

    // Cumulative: windows 0 and 1 from one process; it restarts (new start time) before window 2, so the
    // totals start again from zero. Every export is also sent twice, as a retrying exporter would.
    const collector = await startTestCollector(temp.dir, { dbPath: join(temp.dir, 'cumulative.db') });
    const firstStart = base;
    const secondStart = windowEnd(1) + 1_000_000_000n;
    const exports = [
      build(CUMULATIVE, (d) => d[0], firstStart, windowEnd(0)),
      build(CUMULATIVE, (d) => d[0] + d[1], firstStart, windowEnd(1)),
      build(CUMULATIVE, (d) => d[2], secondStart, windowEnd(2)),
    ];
    for (const request of exports) {
      expect((await postMetrics(collector.url, request)).status).toBe(200);
      expect((await postMetrics(collector.url, request, { format: 'json' })).status).toBe(200);
    }
    const cumulativeMatrix = withoutPeriod(await matrix(collector.url, '&group=client_version'));
    await collector.close();
    const cumulative = { rollups: dumpRollups(collector.dbPath), matrix: cumulativeMatrix };

    expect(protobuf.rollups.length).toBeGreaterThan(10);
    expect(json.rollups).toEqual(protobuf.rollups);
    expect(gzipped.rollups).toEqual(protobuf.rollups);
    expect(cumulative.rollups).toEqual(protobuf.rollups);
    expect(json.matrix).toEqual(protobuf.matrix);
    expect(cumulative.matrix).toEqual(protobuf.matrix);

    // …and the numbers are the ones sent.
    const view = protobuf.matrix as Awaited<ReturnType<typeof matrix>>;
    expect(view.extensions).toEqual([REPLAY, TASKS]);
    const alpha = view.rows.find((row) => row.client === 'alpha@1.0');
    const beta = view.rows.find((row) => row.client === 'beta@2.0');
    const unknown = view.rows.find((row) => row.client === '(unknown client)@(unknown version)');
    expect(alpha).toMatchObject({ requests: 9, declaration: { unknown: 0, none: 0, declared: 9 } });
    expect(alpha?.extensions).toEqual([
      { id: REPLAY, clientDeclared: 7, serverAdvertised: 0, negotiated: 0, serverUnknown: 0 },
      { id: TASKS, clientDeclared: 9, serverAdvertised: 9, negotiated: 9, serverUnknown: 0 },
    ]);
    expect(beta).toMatchObject({ requests: 7, declaration: { unknown: 0, none: 7, declared: 0 } });
    expect(beta?.extensions).toEqual([
      { id: REPLAY, clientDeclared: 0, serverAdvertised: 0, negotiated: 0, serverUnknown: 0 },
      { id: TASKS, clientDeclared: 0, serverAdvertised: 7, negotiated: 0, serverUnknown: 0 },
    ]);
    expect(unknown).toMatchObject({ name: null, version: null, requests: 3, declaration: { unknown: 3, none: 0, declared: 0 } });
  });

  it('real OpenTelemetry SDKs: delta over protobuf and cumulative over JSON with a process restart give the same matrix', async () => {
    const collector = await startTestCollector(temp.dir);
    const reference = await startTestCollector(temp.dir, { dbPath: join(temp.dir, 'reference.db') });

    const record = (provider: MeterProvider, requests: number, tasks: number): void => {
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
    };
    const provider = (url: string, exporter: 'proto' | 'json', temporality: AggregationTemporalityPreference): MeterProvider => {
      const options = { url: `${url}/v1/metrics`, temporalityPreference: temporality };
      return new MeterProvider({
        resource: resourceFromAttributes({ 'service.name': 'sdk-svc', 'service.instance.id': 'sdk-1' }),
        readers: [
          new PeriodicExportingMetricReader({
            exporter: exporter === 'proto' ? new ProtoExporter(options) : new JsonExporter(options),
            exportIntervalMillis: 3_600_000,
          }),
        ],
      });
    };

    // Delta over protobuf, two collections.
    const delta = provider(collector.url, 'proto', AggregationTemporalityPreference.DELTA);
    record(delta, 5, 4);
    await delta.forceFlush();
    record(delta, 2, 1);
    await delta.shutdown();

    // Cumulative over JSON: the first process reports, is flushed twice (a repeat of the same total), and
    // stops; a second process with the same instance id starts from zero.
    const first = provider(reference.url, 'json', AggregationTemporalityPreference.CUMULATIVE);
    record(first, 5, 4);
    await first.forceFlush();
    await first.forceFlush();
    await first.shutdown();
    const second = provider(reference.url, 'json', AggregationTemporalityPreference.CUMULATIVE);
    record(second, 2, 1);
    await second.shutdown();

    const fromDelta = await matrix(collector.url, '&group=client_version');
    const fromCumulative = await matrix(reference.url, '&group=client_version');
    await collector.close();
    await reference.close();
    expect(fromDelta.rows).toEqual([
      {
        client: 'sdk-client@3.1',
        name: 'sdk-client',
        version: '3.1',
        requests: 7,
        serverUnknown: 0,
        declaration: { unknown: 0, none: 0, declared: 7 },
        extensions: [{ id: TASKS, clientDeclared: 5, serverAdvertised: 5, negotiated: 5, serverUnknown: 0 }],
      },
    ]);
    expect(fromCumulative.rows).toEqual(fromDelta.rows);
  });
});
