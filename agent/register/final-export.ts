import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Attributes, HrTime } from '@opentelemetry/api';
import { type ExportResult, ExportResultCode, type InstrumentationScope, getStringFromEnv, millisToHrTime, parseKeyPairsIntoRecord } from '@opentelemetry/core';
import { type Resource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  DataPointType,
  type MetricData,
  type PushMetricExporter,
  type ResourceMetrics,
  type ScopeMetrics,
} from '@opentelemetry/sdk-metrics';
import type { MetricSnapshot } from '../record/recorder.js';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../version.js';
import { type Protocol, signalEndpoint } from './exporters.js';

/** What the parent hands the child on stdin: one export, as plain JSON. */
export interface FinalExportRequest {
  protocol: Protocol;
  timeoutMillis: number;
  resource: { attributes: Attributes; schemaUrl?: string };
  scope: InstrumentationScope;
  metrics: MetricData[];
}

/** What the child answers on its stdout. */
export interface FinalExportAnswer {
  ok: boolean;
  error?: string;
  /** A partial-success answer: points the collector rejected, and why. */
  rejected?: { points: number; message: string };
}

/** Sends an OTLP/HTTP body (built-in modules only: starts as fast as a bare `node`). */
const POST_CHILD = fileURLToPath(new URL('./final-export-post.js', import.meta.url));
/** Sends with the OTLP exporter itself (gRPC, client certificates): slower to start, as it loads the exporter. */
const EXPORTER_CHILD = fileURLToPath(new URL('./final-export-child.js', import.meta.url));

interface Serializer {
  serializeRequest(metrics: ResourceMetrics): Uint8Array | undefined;
  deserializeResponse(data: Uint8Array): { partialSuccess?: { rejectedDataPoints?: unknown; errorMessage?: unknown } };
}

/** The OTLP encoders the exporters use: the transformer of the exporters' own line (beside them in the tree). */
function serializers(): { protobuf: Serializer; json: Serializer } {
  const fromExporter = createRequire(createRequire(import.meta.url).resolve('@opentelemetry/exporter-metrics-otlp-proto'));
  const transformer = fromExporter('@opentelemetry/otlp-transformer') as { ProtobufMetricsSerializer: Serializer; JsonMetricsSerializer: Serializer };
  return { protobuf: transformer.ProtobufMetricsSerializer, json: transformer.JsonMetricsSerializer };
}

/** Settings the small HTTP child cannot honour: the exporter child sends then. */
const TLS_VARIABLES = ['CERTIFICATE', 'CLIENT_KEY', 'CLIENT_CERTIFICATE'].flatMap((name) => [
  `OTEL_EXPORTER_OTLP_${name}`,
  `OTEL_EXPORTER_OTLP_METRICS_${name}`,
]);

function headersFromEnv(): Record<string, string> {
  return {
    ...parseKeyPairsIntoRecord(getStringFromEnv('OTEL_EXPORTER_OTLP_HEADERS')),
    ...parseKeyPairsIntoRecord(getStringFromEnv('OTEL_EXPORTER_OTLP_METRICS_HEADERS')),
  };
}

function compression(): 'gzip' | 'none' {
  const value = (getStringFromEnv('OTEL_EXPORTER_OTLP_METRICS_COMPRESSION') ?? getStringFromEnv('OTEL_EXPORTER_OTLP_COMPRESSION'))?.trim().toLowerCase();
  return value === 'gzip' ? 'gzip' : 'none';
}

/** A stream's identity within one metric: its attributes, keys sorted. */
function streamKey(metric: string, attributes: Attributes): string {
  return `${metric}\u0000${JSON.stringify(
    Object.keys(attributes)
      .sort()
      .map((key) => [key, attributes[key]]),
  )}`;
}

/** The child's environment: no preload of its own (`NODE_OPTIONS` may name `--import @extscope/agent/register`). */
function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env['NODE_OPTIONS'];
  return env;
}

/**
 * The last export of a process that ends while Node.js runs only synchronous code (`process.exit()`, an uncaught
 * exception, the `'exit'` event): no collection can run there (the SDK collects through promises), so the counts
 * are read from the agent's own streams ({@link MetricSnapshot}), which hold every request, and sent by a short
 * child process that the exiting process waits for (`spawnSync`, bounded). The child builds the same OTLP exporter
 * from the same `OTEL_*` variables, so the export goes where the periodic ones go, in the same protocol.
 *
 * Exact because the sums are cumulative: each stream keeps the start time of its earlier exports (noted here as
 * they leave, see {@link watch}), so the collector reads the final point as the same stream grown, never as a new
 * one; a stream never exported before starts now. Nothing is sent when the last delivered export already holds
 * every value.
 */
export class FinalExport {
  /** The last export handed to the exporter, and the last one the collector acknowledged (kept, read at exit only). */
  private sent: ResourceMetrics | undefined;
  private delivered: ResourceMetrics | undefined;
  private done = false;

  constructor(
    private readonly options: {
      resource: Resource;
      protocol: Protocol;
      snapshot: () => MetricSnapshot[];
      /** Told when the collector rejected part of the final export (partial success). */
      onRejected?: (rejected: NonNullable<FinalExportAnswer['rejected']>) => void;
    },
  ) {}

  /**
   * Keeps a reference to every export `exporter` sends, and to the last one delivered (the result still reaches
   * the SDK unchanged). Nothing is read here: an export costs one assignment more.
   */
  watch<T extends PushMetricExporter>(exporter: T): T {
    const original = exporter.export.bind(exporter);
    exporter.export = (metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void) => {
      this.sent = metrics;
      original(metrics, (result) => {
        if (result.code === ExportResultCode.SUCCESS) this.delivered = metrics;
        resultCallback(result);
      });
    };
    return exporter;
  }

  /** The export to send now, or `undefined` when the collector already has every value. */
  request(timeoutMillis: number, now = Date.now()): FinalExportRequest | undefined {
    const snapshot = this.options.snapshot().filter((entry) => entry.points.length > 0);
    const counted = snapshot.some((entry) => entry.metric.instrument === 'counter' && entry.points.some((point) => point.value > 0));
    if (!counted) return undefined;
    const delivered = ours(this.delivered);
    if (
      delivered !== undefined &&
      valuesKey(snapshot.map((entry) => ({ name: entry.metric.name, points: entry.points }))) ===
        valuesKey(
          delivered.metrics.map((metric) => ({ name: metric.descriptor.name, points: metric.dataPoints as { value: unknown; attributes: Attributes }[] })),
        )
    )
      return undefined;
    // A cumulative export carries every stream with the start time it keeps: the last one sent has them all.
    const sent = ours(this.sent);
    const startTimes = new Map<string, HrTime>();
    for (const metric of sent?.metrics ?? []) {
      if (metric.dataPointType !== DataPointType.SUM) continue;
      for (const point of metric.dataPoints) startTimes.set(streamKey(metric.descriptor.name, point.attributes), point.startTime);
    }
    const time = millisToHrTime(now);
    const metrics: MetricData[] = snapshot.map(({ metric, points }) => {
      const descriptor = { name: metric.name, description: metric.brief, unit: metric.unit, valueType: 1 /* ValueType.DOUBLE, as the SDK's default */ };
      const dataPoints = points.map(({ value, attributes }) => ({
        attributes,
        value,
        endTime: time,
        startTime: metric.instrument === 'counter' ? (startTimes.get(streamKey(metric.name, attributes)) ?? time) : time,
      }));
      return metric.instrument === 'counter'
        ? { descriptor, aggregationTemporality: AggregationTemporality.CUMULATIVE, dataPointType: DataPointType.SUM, isMonotonic: true, dataPoints }
        : { descriptor, aggregationTemporality: AggregationTemporality.CUMULATIVE, dataPointType: DataPointType.GAUGE, dataPoints };
    });
    const { resource } = this.options;
    return {
      protocol: this.options.protocol,
      timeoutMillis,
      resource: { attributes: resource.attributes, ...(resource.schemaUrl !== undefined && { schemaUrl: resource.schemaUrl }) },
      scope: sent?.scope ?? { name: PACKAGE_NAME, version: PACKAGE_VERSION },
      metrics,
    };
  }

  /**
   * Sends the final export and waits for it, at most `deadlineMs` (the child is killed then). Synchronous: for
   * the `'exit'` event. Runs once; never throws, never writes to stdout.
   */
  run(deadlineMs: number): FinalExportAnswer | undefined {
    if (this.done) return undefined;
    this.done = true;
    try {
      // The child's own export timeout leaves it time to start and to answer before the deadline.
      const request = this.request(Math.max(100, deadlineMs - 400));
      if (request === undefined) return undefined;
      const viaExporter = request.protocol === 'grpc' || TLS_VARIABLES.some((name) => getStringFromEnv(name) !== undefined);
      return viaExporter ? this.sendWithExporter(request, deadlineMs) : this.post(request, deadlineMs);
    } catch (error) {
      return { ok: false, error: error instanceof Error ? error.message : String(error) };
    }
  }

  /** OTLP/HTTP: encoded here, as the exporter would, and posted by the small child. */
  private post(request: FinalExportRequest, deadlineMs: number): FinalExportAnswer {
    const { protobuf, json } = serializers();
    const serializer = request.protocol === 'http/json' ? json : protobuf;
    const metrics: ResourceMetrics = {
      resource: resourceFromAttributes(request.resource.attributes, request.resource.schemaUrl === undefined ? {} : { schemaUrl: request.resource.schemaUrl }),
      scopeMetrics: [{ scope: request.scope, metrics: request.metrics }],
    };
    const encoded = serializer.serializeRequest(metrics);
    if (encoded === undefined) return { ok: false, error: 'nothing to send' };
    const gzip = compression() === 'gzip';
    const headers: Record<string, string> = {
      ...headersFromEnv(),
      'content-type': request.protocol === 'http/json' ? 'application/json' : 'application/x-protobuf',
      ...(gzip && { 'content-encoding': 'gzip' }),
    };
    const body = Buffer.from(gzip ? gzipSync(encoded) : encoded).toString('base64');
    const output = spawnChild(
      POST_CHILD,
      JSON.stringify({ url: signalEndpoint('METRICS', request.protocol), headers, body, timeoutMillis: request.timeoutMillis }),
      deadlineMs,
    );
    let reply: { status?: number; body?: string; error?: string } | undefined;
    try {
      reply = JSON.parse(output ?? '') as typeof reply;
    } catch {
      return { ok: false, error: 'the final export did not finish in time' };
    }
    if (reply?.status === undefined || reply.status < 200 || reply.status >= 300) return { ok: false, error: reply?.error ?? `HTTP ${reply?.status}` };
    const answer: FinalExportAnswer = { ok: true };
    try {
      const partial =
        reply.body === undefined || reply.body.length === 0 ? undefined : serializer.deserializeResponse(Buffer.from(reply.body, 'base64')).partialSuccess;
      const points = Number(partial?.rejectedDataPoints ?? 0);
      const message = typeof partial?.errorMessage === 'string' ? partial.errorMessage : '';
      if (points > 0 || message !== '') {
        answer.rejected = { points, message };
        this.options.onRejected?.(answer.rejected);
      }
    } catch {
      // An answer that is not OTLP: the export itself succeeded.
    }
    return answer;
  }

  /** gRPC or client certificates: the exporter, configured by the same variables, in a child of its own. */
  private sendWithExporter(request: FinalExportRequest, deadlineMs: number): FinalExportAnswer {
    const answer = parseAnswer(spawnChild(EXPORTER_CHILD, JSON.stringify(request), deadlineMs));
    if (answer?.rejected !== undefined) this.options.onRejected?.(answer.rejected);
    return answer ?? { ok: false, error: 'the final export did not finish in time' };
  }
}

/** The agent's own scope in an export. */
function ours(metrics: ResourceMetrics | undefined): ScopeMetrics | undefined {
  return metrics?.scopeMetrics.find((scope) => scope.scope.name === PACKAGE_NAME);
}

function spawnChild(script: string, input: string, deadlineMs: number): string | undefined {
  const child = spawnSync(process.execPath, [script], {
    input,
    timeout: deadlineMs,
    killSignal: 'SIGKILL',
    stdio: ['pipe', 'pipe', 'pipe'],
    env: childEnv(),
    windowsHide: true,
    maxBuffer: 1 << 20,
  });
  return child.stdout?.toString('utf8');
}

function valuesKey(metrics: { name: string; points: readonly { value: unknown; attributes: Attributes }[] }[]): string {
  const entries: string[] = [];
  for (const metric of metrics) for (const point of metric.points) entries.push(`${streamKey(metric.name, point.attributes)}=${String(point.value)}`);
  return entries.sort().join('\n');
}

function parseAnswer(text: string | undefined): FinalExportAnswer | undefined {
  try {
    const answer = JSON.parse(text ?? '') as FinalExportAnswer;
    return typeof answer === 'object' && answer !== null && typeof answer.ok === 'boolean' ? answer : undefined;
  } catch {
    return undefined;
  }
}
