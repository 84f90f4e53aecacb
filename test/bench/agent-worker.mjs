// One benchmark variant in its own process (patching is process-wide): serves a trivial echo tool from one
// McpServer over an in-memory wire to a 2026-07-28 client, and prints {rps, heapUsedMB, ...} as JSON.
//   node agent-worker.mjs <variant> <requests> <concurrency> [distinctJunkIds]
// variants: bare | otel (metrics and tracing SDK with a context manager, no agent) | metrics | wire (metrics,
// wire fallback on) | spans | wrapper. `metrics` and `wire` set up what the zero-code entry sets up for metrics
// only: a meter provider, no tracer provider and no context manager.
import { createRequire } from 'node:module';
import { timedWindows } from './timed-windows.mjs';

const [variant, requestsArg, concurrencyArg, junkArg] = process.argv.slice(2);
const requests = Number(requestsArg ?? 20_000);
const concurrency = Number(concurrencyArg ?? 16);
const junkIds = Number(junkArg ?? 0);

let tracer;
let MeterProvider;
// Loaded only when used: an uninstrumented server loads none of it (loading the OpenTelemetry SDK alone costs
// CPU on every request of this server: see BENCHMARKS.md).
if (variant !== 'bare') {
  const { context, trace } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const sdkMetrics = await import('@opentelemetry/sdk-metrics');
  ({ MeterProvider } = sdkMetrics);
  const { AggregationTemporality } = sdkMetrics;
  const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const { ExtscopeInstrumentation } = await import('@extscope/agent');
  // Exporters that accept and discard: the benchmark measures the request path, not a network.
  const discardMetrics = { export: (_m, done) => done({ code: 0 }), forceFlush: async () => {}, shutdown: async () => {}, selectAggregationTemporality: () => AggregationTemporality.DELTA };
  const discardSpans = { export: (_s, done) => done({ code: 0 }), shutdown: async () => {} };
  const { PeriodicExportingMetricReader } = sdkMetrics;
  const metricsOnly = variant === 'metrics' || variant === 'wire';
  const meterProvider = new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: discardMetrics, exportIntervalMillis: 1000 })] });
  let tracerProvider;
  if (!metricsOnly) {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(discardSpans)] });
    trace.setGlobalTracerProvider(tracerProvider);
    tracer = tracerProvider.getTracer('user-wrapper');
  }
  if (variant === 'metrics' || variant === 'wire' || variant === 'spans') {
    // `wire`: as @extscope/agent/register runs it; an SDK copy is patched, so the fallback must cost nothing.
    const instrumentation = new ExtscopeInstrumentation({ spans: variant === 'spans', wireFallback: variant === 'wire' });
    instrumentation.setMeterProvider(meterProvider);
    if (tracerProvider !== undefined) instrumentation.setTracerProvider(tracerProvider);
    globalThis.extscopeInstrumentation = instrumentation;
  }
}

const require = createRequire(import.meta.url);
const { McpServer, InMemoryTransport } = require('@modelcontextprotocol/server');
const { serveStdio } = require('@modelcontextprotocol/server/stdio');
const { Client } = await import('@modelcontextprotocol/client');
const { z } = await import('zod');

const echo = async ({ text }) => ({ content: [{ type: 'text', text }] });
// What a user writes by hand: one span per tool call around the handler.
const wrapped = (handler) => (args, ctx) =>
  tracer.startActiveSpan('tools/call echo', { kind: 1, attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'echo' } }, async (span) => {
    try {
      return await handler(args, ctx);
    } finally {
      span.end();
    }
  });

const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
serveStdio(() => {
  const server = new McpServer({ name: 'bench', version: '1.0.0' }, { capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } });
  server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, variant === 'wrapper' ? wrapped(echo) : echo);
  return server;
}, { transport: serverSide });
const client = new Client({ name: 'bench-client', version: '1.0.0' }, { capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } }, versionNegotiation: { mode: 'auto' } });
await client.connect(clientSide);

const CAPS = 'io.modelcontextprotocol/clientCapabilities';
let sent = 0;
function call() {
  const i = sent++;
  const params = { name: 'echo', arguments: { text: 'hi' } };
  if (junkIds > 0) params._meta = { [CAPS]: { extensions: { 'io.modelcontextprotocol/tasks': {}, [`com.junk${i % junkIds}/id-${i % junkIds}`]: { i } } } };
  return client.callTool(params);
}
async function drive(total) {
  const target = sent + total;
  const lanes = Array.from({ length: concurrency }, async () => {
    while (sent < target) await call();
  });
  await Promise.all(lanes);
}

await drive(Math.min(2000, requests)); // warm-up: JIT, schemas, caches
globalThis.gc?.();
const heapBefore = process.memoryUsage().heapUsed;
const { rps, cpuMicrosPerRequest } = await timedWindows(drive, requests);
globalThis.gc?.();
const heapUsedMB = process.memoryUsage().heapUsed / 2 ** 20;
const heapGrowthMB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;

// What the agent counted, read afterwards through a second meter provider (the agent reports all its counts
// to whichever provider it is given).
let streams;
let counted;
if (globalThis.extscopeInstrumentation !== undefined) {
  const { OnDemandReader } = await import('../support/on-demand-reader.mjs');
  const reader = new OnDemandReader({ cardinalitySelector: () => 1_000_000 });
  globalThis.extscopeInstrumentation.setMeterProvider(new MeterProvider({ readers: [reader] }));
  const { resourceMetrics } = await reader.collect();
  const pointsOf = (name) => resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics).filter((metric) => metric.descriptor.name === name).flatMap((metric) => metric.dataPoints);
  streams = { requests: pointsOf('extscope.requests').length, extensions: pointsOf('extscope.extension.requests').length };
  counted = pointsOf('extscope.requests').reduce((sum, point) => sum + point.value, 0);
}
process.stdout.write(`${JSON.stringify({
  variant,
  requests,
  rps,
  cpuMicrosPerRequest,
  heapUsedMB,
  heapGrowthMB,
  streams,
  counted,
})}\n`);
await client.close();
process.exit(0);
