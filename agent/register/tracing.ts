import type * as ContextAsyncHooks from '@opentelemetry/context-async-hooks';
import type * as TraceExporterGrpc from '@opentelemetry/exporter-trace-otlp-grpc';
import type * as TraceExporterHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as TraceExporterProto from '@opentelemetry/exporter-trace-otlp-proto';
import type * as SdkTraceBase from '@opentelemetry/sdk-trace-base';
import { createRequire } from 'node:module';
import { inspect } from 'node:util';
import { context, trace } from '@opentelemetry/api';
import { type ExportResult, ExportResultCode, hrTimeToMicroseconds } from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import { type ExporterName, GRPC_EXPORTERS, type Protocol } from './exporters.js';

/**
 * The tracing half of the zero-code SDK. Its packages are loaded here, when spans are on, and not before: with
 * metrics only, the server carries none of their code. They are CommonJS packages (their `main`), which is what an
 * `import` of them loads too, so an application that imports them shares these copies. `require` rather than
 * `await import()`: a top-level await would make `@extscope/agent/register` impossible to `require()` (`node -r`).
 */
const load = createRequire(import.meta.url);

export interface TraceExporterChoice {
  /** `otlp` and/or `console` (on stderr). */
  exporters: ExporterName[];
  protocol: Protocol;
  /** Passed to the exporter as they are. */
  exporterOptions: { timeoutMillis?: number };
  /** Wraps the exporter (export health reporting). */
  watch?: (exporter: SdkTraceBase.SpanExporter) => SdkTraceBase.SpanExporter;
}

/** Registers a global tracer provider exporting OTLP/HTTP spans in batches, and the context manager spans need. */
export function startTracing(resource: Resource, choice: TraceExporterChoice): SdkTraceBase.BasicTracerProvider {
  const { BasicTracerProvider, BatchSpanProcessor } = load('@opentelemetry/sdk-trace-base') as typeof SdkTraceBase;
  const { AsyncLocalStorageContextManager } = load('@opentelemetry/context-async-hooks') as typeof ContextAsyncHooks;
  const processors: SdkTraceBase.SpanProcessor[] = [];
  if (choice.exporters.includes('otlp')) {
    const built = otlpTraceExporter(choice.protocol, choice.exporterOptions);
    processors.push(new BatchSpanProcessor(choice.watch?.(built) ?? built));
  }
  if (choice.exporters.includes('console')) processors.push(new BatchSpanProcessor(new StderrSpanExporter()));
  const tracerProvider = new BasicTracerProvider({ resource, spanProcessors: processors });
  trace.setGlobalTracerProvider(tracerProvider);
  // On Node 20 `AsyncLocalStorage` runs on promise hooks, which cost every promise the server makes: installed
  // only here, for spans.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  return tracerProvider;
}

function otlpTraceExporter(protocol: Protocol, options: { timeoutMillis?: number }): SdkTraceBase.SpanExporter {
  if (protocol === 'grpc') return new (load(GRPC_EXPORTERS.TRACES) as typeof TraceExporterGrpc).OTLPTraceExporter(options);
  if (protocol === 'http/json') return new (load('@opentelemetry/exporter-trace-otlp-http') as typeof TraceExporterHttp).OTLPTraceExporter(options);
  return new (load('@opentelemetry/exporter-trace-otlp-proto') as typeof TraceExporterProto).OTLPTraceExporter(options);
}

/**
 * `OTEL_TRACES_EXPORTER=console`, on stderr: the SDK's console exporter prints to stdout, which on a stdio
 * server is the protocol stream. One `inspect`ed object per span, with the fields the SDK's prints.
 */
class StderrSpanExporter implements SdkTraceBase.SpanExporter {
  export(spans: SdkTraceBase.ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    for (const span of spans) {
      const context = span.spanContext();
      const info = {
        resource: { attributes: span.resource.attributes },
        instrumentationScope: span.instrumentationScope,
        traceId: context.traceId,
        parentSpanContext: span.parentSpanContext,
        name: span.name,
        id: context.spanId,
        kind: span.kind,
        timestamp: hrTimeToMicroseconds(span.startTime),
        duration: hrTimeToMicroseconds(span.duration),
        attributes: span.attributes,
        status: span.status,
        events: span.events,
        links: span.links,
      };
      process.stderr.write(`${inspect(info, { depth: 3 })}\n`);
    }
    resultCallback({ code: ExportResultCode.SUCCESS });
  }

  async shutdown(): Promise<void> {}
}
