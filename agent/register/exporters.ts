import type * as MetricsGrpc from '@opentelemetry/exporter-metrics-otlp-grpc';
import { createRequire } from 'node:module';
import { inspect } from 'node:util';
import { type ExportResult, ExportResultCode, getNumberFromEnv, getStringFromEnv, getStringListFromEnv } from '@opentelemetry/core';
import { AggregationTemporalityPreference, OTLPMetricExporter as JsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as ProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { AggregationTemporality, type PushMetricExporter, type ResourceMetrics } from '@opentelemetry/sdk-metrics';

/**
 * Which exporters the zero-code SDK builds, from the standard `OTEL_*` variables: `OTEL_{METRICS,TRACES}_EXPORTER`
 * (`otlp`, `console`, `none`) and `OTEL_EXPORTER_OTLP[_{METRICS,TRACES}]_PROTOCOL` (`http/protobuf`, `http/json`,
 * `grpc`). A value the agent cannot honour is refused with one stderr line at start, naming what is used instead.
 */
export type SignalName = 'METRICS' | 'TRACES';
export type Protocol = 'http/protobuf' | 'http/json' | 'grpc';

/**
 * gRPC exporters are loaded only when asked for: most servers never carry their code. They are optional peer
 * dependencies of the agent package (they pull `@grpc/grpc-js`), installed by whoever sets the protocol to `grpc`.
 */
const load = createRequire(import.meta.url);

/** The optional gRPC exporter package of each signal. */
export const GRPC_EXPORTERS: Record<SignalName, string> = {
  METRICS: '@opentelemetry/exporter-metrics-otlp-grpc',
  TRACES: '@opentelemetry/exporter-trace-otlp-grpc',
};
/** The version the agent's peer dependencies name (test/agent/version.test.ts keeps them equal to agent/package.json). */
export const GRPC_EXPORTER_VERSION = '0.223.0';

function installed(name: string): boolean {
  try {
    load.resolve(name);
    return true;
  } catch {
    return false;
  }
}

const PROTOCOLS: readonly Protocol[] = ['http/protobuf', 'http/json', 'grpc'];
const EXPORTERS = ['otlp', 'console', 'none'] as const;
export type ExporterName = (typeof EXPORTERS)[number];

function refuse(line: string): void {
  process.stderr.write(`extscope: ${line}\n`);
}

/** The variable that sets a signal's protocol: the per-signal one when set, else the general one. */
function protocolVariable(signal: SignalName): string {
  return getStringFromEnv(`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`) !== undefined ? `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL` : 'OTEL_EXPORTER_OTLP_PROTOCOL';
}

export function exporterProtocol(signal: SignalName, warn: (line: string) => void = refuse): Protocol {
  const variable = protocolVariable(signal);
  const protocol = getStringFromEnv(variable);
  if (protocol === undefined) return 'http/protobuf';
  if ((PROTOCOLS as readonly string[]).includes(protocol)) return protocol as Protocol;
  warn(`${variable}=${protocol} is not an OTLP protocol the agent supports (${PROTOCOLS.join(', ')}); using http/protobuf`);
  return 'http/protobuf';
}

/** The exporters named for a signal (default `otlp`); `[]` for `none`. Unknown names are refused (one line each). */
export function chosenExporters(signal: SignalName, warn: (line: string) => void = refuse): ExporterName[] {
  const variable = `OTEL_${signal}_EXPORTER`;
  const names = getStringListFromEnv(variable) ?? ['otlp'];
  if (names.includes('none')) return [];
  const known = names.filter((name): name is ExporterName => (EXPORTERS as readonly string[]).includes(name));
  const unknown = names.filter((name) => !(EXPORTERS as readonly string[]).includes(name));
  if (unknown.length > 0)
    warn(
      `${variable}=${names.join(',')}: ${unknown.join(', ')} is not supported by the agent (otlp, console, none); ${known.length > 0 ? `using ${known.join(',')}` : 'using otlp'}`,
    );
  const chosen: ExporterName[] = known.length > 0 ? [...new Set(known)] : ['otlp'];
  // OTLP over gRPC without its optional exporter: said once at start, and that signal is not exported over OTLP
  // (another protocol would post to the gRPC endpoint, which does not answer it).
  const grpc = GRPC_EXPORTERS[signal];
  if (chosen.includes('otlp') && exporterProtocol(signal, () => {}) === 'grpc' && !installed(grpc)) {
    warn(
      `${protocolVariable(signal)}=grpc needs ${grpc}, which is not installed (npm install ${grpc}@${GRPC_EXPORTER_VERSION}); ${signal.toLowerCase()} are not exported`,
    );
    return chosen.filter((name) => name !== 'otlp');
  }
  return chosen;
}

/**
 * The temporality of the exported sums: cumulative unless `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`
 * says otherwise (the exporter reads the variable itself then). Cumulative because the counts live in
 * cumulative in-process streams: an export carries every count made so far, so one that fails (collector
 * restarting or killed) loses nothing, the next one carries it. A failed delta export drops its increments.
 */
function temporalityPreference(): { temporalityPreference?: AggregationTemporalityPreference } {
  return getStringFromEnv('OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE') === undefined
    ? { temporalityPreference: AggregationTemporalityPreference.CUMULATIVE }
    : {};
}

/** True when the exported sums are cumulative (the default): the final export at exit relies on it. */
export function cumulativeSums(): boolean {
  const preference = getStringFromEnv('OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE')?.toLowerCase();
  return preference === undefined || preference === 'cumulative';
}

/** Where a signal is exported, as the OTLP exporters resolve it (for messages only). */
export function signalEndpoint(signal: SignalName, protocol: Protocol = exporterProtocol(signal, () => {})): string {
  const specific = getStringFromEnv(`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`);
  if (specific !== undefined) return specific;
  if (protocol === 'grpc') return getStringFromEnv('OTEL_EXPORTER_OTLP_ENDPOINT') ?? 'http://localhost:4317';
  const base = getStringFromEnv('OTEL_EXPORTER_OTLP_ENDPOINT') ?? 'http://localhost:4318';
  return `${base.replace(/\/+$/, '')}/v1/${signal.toLowerCase()}`;
}

/** The OTLP metric exporter for `protocol`, configured by the standard variables and `options`. */
export function otlpMetricExporter(protocol: Protocol, options: { timeoutMillis?: number }): PushMetricExporter {
  const config = { ...options, ...temporalityPreference() };
  if (protocol === 'grpc') return new (load(GRPC_EXPORTERS.METRICS) as typeof MetricsGrpc).OTLPMetricExporter(config);
  return protocol === 'http/json' ? new JsonMetricExporter(config) : new ProtoMetricExporter(config);
}

/**
 * `OTEL_METRICS_EXPORTER=console`, on stderr: the SDK's console exporter prints to stdout, which on a stdio
 * server is the protocol stream. Prints what the SDK's prints, one `inspect`ed object per metric.
 */
export class StderrMetricExporter implements PushMetricExporter {
  private stopped = false;

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    if (this.stopped) {
      resultCallback({ code: ExportResultCode.FAILED });
      return;
    }
    for (const scope of metrics.scopeMetrics) {
      for (const metric of scope.metrics) {
        process.stderr.write(
          `${inspect({ descriptor: metric.descriptor, dataPointType: metric.dataPointType, dataPoints: metric.dataPoints }, { depth: null })}\n`,
        );
      }
    }
    resultCallback({ code: ExportResultCode.SUCCESS });
  }

  selectAggregationTemporality(): AggregationTemporality {
    return AggregationTemporality.CUMULATIVE;
  }

  async forceFlush(): Promise<void> {}

  async shutdown(): Promise<void> {
    this.stopped = true;
  }
}

/** The metric export interval (`OTEL_METRIC_EXPORT_INTERVAL`, default 60 s). */
export function metricExportInterval(): number {
  return getNumberFromEnv('OTEL_METRIC_EXPORT_INTERVAL') ?? 60_000;
}
