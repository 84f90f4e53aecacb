import { randomUUID } from 'node:crypto';
import { format } from 'node:util';
import { type DiagLogger, diag, metrics, propagation, trace } from '@opentelemetry/api';
import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
  type ExportResult,
  diagLogLevelFromString,
  getNumberFromEnv,
  getStringFromEnv,
} from '@opentelemetry/core';
import { type Resource, defaultResource, detectResources, envDetector, hostDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  type AggregationOption,
  AggregationTemporality,
  AggregationType,
  type InstrumentType,
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
  type ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import {
  ATTR_SERVER_NAME,
  ATTR_SERVER_TRANSPORT,
  ATTR_SERVER_VERSION,
  ATTR_SERVICE_INSTANCE_ID,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  type Transport,
} from '../../contract/index.js';
import { ATTR_PROCESS_PID, ATTR_PROCESS_RUNTIME_NAME, ATTR_PROCESS_RUNTIME_VERSION } from '../semconv.js';
import type { ServerIdentity } from '../types.js';
import { type ExportHealth, rejectionLine, watchRejections } from './export-health.js';
import {
  StderrMetricExporter,
  chosenExporters,
  cumulativeSums,
  exporterProtocol,
  metricExportInterval,
  otlpMetricExporter,
  signalEndpoint,
} from './exporters.js';
import { FinalExport } from './final-export.js';
import type { MetricSnapshot } from '../record/recorder.js';
import { startTracing } from './tracing.js';

/** Every OTel diagnostic goes to stderr: on a stdio server, stdout is the protocol stream. */
const stderrLogger: DiagLogger = {
  error: (...args) => process.stderr.write(`${format(...args)}\n`),
  warn: (...args) => process.stderr.write(`${format(...args)}\n`),
  info: (...args) => process.stderr.write(`${format(...args)}\n`),
  debug: (...args) => process.stderr.write(`${format(...args)}\n`),
  verbose: (...args) => process.stderr.write(`${format(...args)}\n`),
};

export function installStderrDiagLogger(): void {
  const level = getStringFromEnv('OTEL_LOG_LEVEL');
  if (level !== undefined) diag.setLogger(stderrLogger, { logLevel: diagLogLevelFromString(level) });
}

export interface AgentSdk {
  meterProvider: MeterProvider | undefined;
  tracerProvider: BasicTracerProvider | undefined;
  /** The synchronous last export at exit (cumulative OTLP metrics only). */
  finalExport: FinalExport | undefined;
  /** Flushes and stops both providers; returns within `deadlineMs` even when the collector never answers. */
  shutdown(deadlineMs?: number): Promise<void>;
}

const DEFAULT_SHUTDOWN_DEADLINE_MS = 1500;
/**
 * The spec's 10 s export timeout, with its retries on ref'd timers, keeps a finished process (a stdio server
 * whose client went away) alive for 10 s when the collector is down. Exports here are small aggregates.
 */
const DEFAULT_EXPORT_TIMEOUT_MS = 2000;

/**
 * `maxMs` caps the timeout (retries included). Metrics pass half their export interval: an export whose retries
 * outlived the interval would overlap the next one, and with the collector down the retry timers would then never
 * leave the event loop idle, so a finished process (a stdio server whose client went away) would never exit.
 */
function exportTimeout(signal: 'METRICS' | 'TRACES', maxMs = Infinity): { timeoutMillis?: number } {
  const configured = getNumberFromEnv(`OTEL_EXPORTER_OTLP_${signal}_TIMEOUT`) ?? getNumberFromEnv('OTEL_EXPORTER_OTLP_TIMEOUT');
  if (configured === undefined) return { timeoutMillis: Math.min(DEFAULT_EXPORT_TIMEOUT_MS, maxMs) };
  return configured > maxMs ? { timeoutMillis: maxMs } : {};
}
/**
 * What the last export at shutdown leaves of the deadline: the collection before it, and the failure's stderr line
 * after it, so that a collector that accepts the connection and never answers is reported, not just outwaited.
 */
const FINAL_EXPORT_MARGIN_MS = 250;

/**
 * Exports through `periodic` until {@link useFinal}, then through an exporter built for the shutdown (same
 * destination): its timeout is the configured one (not halved by the interval, as no export follows), within the
 * shutdown's deadline.
 */
class FinalExportSwitch implements PushMetricExporter {
  private current: PushMetricExporter;
  private final: PushMetricExporter | undefined;

  constructor(
    private readonly periodic: PushMetricExporter,
    private readonly buildFinal: (timeout: { timeoutMillis?: number }) => PushMetricExporter,
  ) {
    this.current = periodic;
  }

  useFinal(deadlineMs: number): void {
    if (this.final !== undefined) return;
    try {
      this.final = this.buildFinal(exportTimeout('METRICS', Math.max(1, deadlineMs - FINAL_EXPORT_MARGIN_MS)));
      this.current = this.final;
    } catch {
      // The periodic exporter, with its shorter timeout, sends the last export then.
    }
  }

  export(metrics: ResourceMetrics, resultCallback: (result: ExportResult) => void): void {
    this.current.export(metrics, resultCallback);
  }

  selectAggregationTemporality(instrumentType: InstrumentType): AggregationTemporality {
    return this.periodic.selectAggregationTemporality?.(instrumentType) ?? AggregationTemporality.CUMULATIVE;
  }

  selectAggregation(instrumentType: InstrumentType): AggregationOption {
    return this.periodic.selectAggregation?.(instrumentType) ?? { type: AggregationType.DEFAULT };
  }

  async forceFlush(): Promise<void> {
    await Promise.all([this.periodic.forceFlush(), this.final?.forceFlush()]);
  }

  async shutdown(): Promise<void> {
    await Promise.all([this.periodic.shutdown(), this.final?.shutdown()]);
  }
}

/** Room above the agent's own per-attribute caps, so the SDK never merges our streams into its overflow. */
const SDK_CARDINALITY_LIMIT = 100_000;

/** True when the application (or another preload) already registered OpenTelemetry providers. */
export function appHasOpenTelemetry(): boolean {
  const meterProvider = metrics.getMeterProvider();
  const tracerDelegate = (trace.getTracerProvider() as { getDelegate?: () => unknown }).getDelegate?.();
  const isNoop = (provider: unknown): boolean => provider?.constructor?.name?.startsWith('Noop') ?? true;
  return !isNoop(meterProvider) || (tracerDelegate !== undefined && !isNoop(tracerDelegate));
}

function buildResource(server: ServerIdentity, transport?: Transport): Resource {
  const defaults = resourceFromAttributes({
    // How the collector tells a per-session stdio process (a session of its build) from a long-lived server.
    ...(transport !== undefined && { [ATTR_SERVER_TRANSPORT]: transport }),
    ...(server.name !== undefined && { [ATTR_SERVICE_NAME]: server.name }),
    ...(server.version !== undefined && { [ATTR_SERVICE_VERSION]: server.version }),
    ...(server.name !== undefined && { [ATTR_SERVER_NAME]: server.name }),
    ...(server.version !== undefined && { [ATTR_SERVER_VERSION]: server.version }),
    [ATTR_SERVICE_INSTANCE_ID]: randomUUID(),
    [ATTR_PROCESS_PID]: process.pid,
    [ATTR_PROCESS_RUNTIME_NAME]: 'nodejs',
    [ATTR_PROCESS_RUNTIME_VERSION]: process.versions.node,
  });
  // Later merges win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override the defaults above.
  return defaultResource()
    .merge(defaults)
    .merge(detectResources({ detectors: [hostDetector, envDetector] }));
}

/**
 * Starts the OpenTelemetry SDK for the zero-code entry: OTLP/HTTP metrics (cumulative sums, see
 * {@link temporalityPreference}) and, with `spans`, OTLP/HTTP spans, configured by the standard `OTEL_*`
 * variables. It registers the global providers and W3C propagators, and the context manager when there are spans.
 *
 * Without `spans` the tracing SDK is not even loaded, and no context manager is installed (see `tracing.ts`).
 */
export function startAgentSdk(
  server: ServerIdentity,
  options: { spans: boolean; snapshot?: () => MetricSnapshot[]; transport?: Transport | undefined },
  health?: ExportHealth,
): AgentSdk {
  const resource = buildResource(server, options.transport);
  // host.id is read asynchronously: settled long before an exit, when the final export reads the attributes.
  void resource.waitForAsyncAttributes?.().catch(() => {});
  let meterProvider: MeterProvider | undefined;
  let tracerProvider: BasicTracerProvider | undefined;
  let metricsFinal: FinalExportSwitch | undefined;
  let finalExport: FinalExport | undefined;

  const metricExporters = chosenExporters('METRICS');
  if (metricExporters.length > 0) {
    const interval = metricExportInterval();
    const reader = (exporter: PushMetricExporter) =>
      new PeriodicExportingMetricReader({
        exporter,
        exportIntervalMillis: interval,
        exportTimeoutMillis: Math.min(getNumberFromEnv('OTEL_METRIC_EXPORT_TIMEOUT') ?? 30_000, interval),
        cardinalityLimits: { default: SDK_CARDINALITY_LIMIT },
      });
    const readers: PeriodicExportingMetricReader[] = [];
    if (metricExporters.includes('otlp')) {
      const protocol = exporterProtocol('METRICS');
      const endpoint = signalEndpoint('METRICS', protocol);
      const build = (timeout: { timeoutMillis?: number }) => {
        const built = otlpMetricExporter(protocol, timeout);
        if (health !== undefined) watchRejections(built, (rejection) => health.rejected('metrics', endpoint, rejection));
        return built;
      };
      metricsFinal = new FinalExportSwitch(build(exportTimeout('METRICS', Math.max(1, Math.floor(interval / 2)))), build);
      let exporter: PushMetricExporter = health === undefined ? metricsFinal : health.watch(metricsFinal, 'metrics', endpoint);
      // With delta sums an export at exit could not know what the last collection took: only cumulative ones.
      if (options.snapshot !== undefined && cumulativeSums()) {
        finalExport = new FinalExport({
          resource,
          protocol,
          snapshot: options.snapshot,
          ...(health !== undefined && { onRejected: (rejection) => process.stderr.write(`${rejectionLine('metrics', endpoint, rejection)}\n`) }),
        });
        exporter = finalExport.watch(exporter);
      }
      readers.push(reader(exporter));
    }
    if (metricExporters.includes('console')) readers.push(reader(new StderrMetricExporter()));
    meterProvider = new MeterProvider({ resource, readers });
    metrics.setGlobalMeterProvider(meterProvider);
  }

  const traceExporters = options.spans ? chosenExporters('TRACES') : [];
  if (traceExporters.length > 0) {
    const protocol = exporterProtocol('TRACES');
    const endpoint = signalEndpoint('TRACES', protocol);
    tracerProvider = startTracing(resource, {
      exporters: traceExporters,
      protocol,
      exporterOptions: exportTimeout('TRACES'),
      ...(health !== undefined && {
        watch: (exporter) => {
          watchRejections(exporter, (rejection) => health.rejected('traces', endpoint, rejection));
          return health.watch(exporter, 'traces', endpoint);
        },
      }),
    });
  }

  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));

  let stopping: Promise<void> | undefined;
  return {
    meterProvider,
    tracerProvider,
    finalExport,
    shutdown(deadlineMs = DEFAULT_SHUTDOWN_DEADLINE_MS) {
      metricsFinal?.useFinal(deadlineMs);
      stopping ??= new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadlineMs);
        timer.unref();
        // allSettled never rejects.
        void Promise.allSettled([meterProvider?.shutdown(), tracerProvider?.shutdown()]).then(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      return stopping;
    },
  };
}

/**
 * The final export for a process whose SDK never started (no server was identified before it ended: a version
 * probe answered with an error, say): what it counted goes out under a resource with no server name.
 */
export function finalExportWithoutSdk(snapshot: () => MetricSnapshot[]): FinalExport | undefined {
  if (!chosenExporters('METRICS', () => {}).includes('otlp') || !cumulativeSums()) return undefined;
  const endpoint = signalEndpoint('METRICS');
  return new FinalExport({
    resource: buildResource({}),
    protocol: exporterProtocol('METRICS', () => {}),
    snapshot,
    onRejected: (rejection) => process.stderr.write(`${rejectionLine('metrics', endpoint, rejection)}\n`),
  });
}
