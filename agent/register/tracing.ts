import type * as ContextAsyncHooks from '@opentelemetry/context-async-hooks';
import type * as TraceExporterHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as TraceExporterProto from '@opentelemetry/exporter-trace-otlp-proto';
import type * as SdkTraceBase from '@opentelemetry/sdk-trace-base';
import { createRequire } from 'node:module';
import { context, trace } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';

/**
 * The tracing half of the zero-code SDK. Its packages are loaded here, when spans are on, and not before: with
 * metrics only, the server carries none of their code. They are CommonJS packages (their `main`), which is what an
 * `import` of them loads too, so an application that imports them shares these copies. `require` rather than
 * `await import()`: a top-level await would make `extscope/register` impossible to `require()` (`node -r`).
 */
const load = createRequire(import.meta.url);

export interface TraceExporterChoice {
  protocol: 'http/json' | 'http/protobuf';
  /** Passed to the exporter as they are. */
  exporterOptions: { timeoutMillis?: number };
  /** Wraps the exporter (export health reporting). */
  watch?: (exporter: SdkTraceBase.SpanExporter) => SdkTraceBase.SpanExporter;
}

/** Registers a global tracer provider exporting OTLP/HTTP spans in batches, and the context manager spans need. */
export function startTracing(resource: Resource, choice: TraceExporterChoice): SdkTraceBase.BasicTracerProvider {
  const { BasicTracerProvider, BatchSpanProcessor } = load('@opentelemetry/sdk-trace-base') as typeof SdkTraceBase;
  const { AsyncLocalStorageContextManager } = load('@opentelemetry/context-async-hooks') as typeof ContextAsyncHooks;
  const built =
    choice.protocol === 'http/json'
      ? new (load('@opentelemetry/exporter-trace-otlp-http') as typeof TraceExporterHttp).OTLPTraceExporter(choice.exporterOptions)
      : new (load('@opentelemetry/exporter-trace-otlp-proto') as typeof TraceExporterProto).OTLPTraceExporter(choice.exporterOptions);
  const exporter = choice.watch?.(built) ?? built;
  const tracerProvider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(tracerProvider);
  // On Node 20 `AsyncLocalStorage` runs on promise hooks, which cost every promise the server makes: installed
  // only here, for spans.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  return tracerProvider;
}
