// One variant of the comparison benchmark in its own process (patching is process-wide): the same v2 McpServer
// (serveStdio over an in-memory wire, a 2026-07-28 client declaring io.modelcontextprotocol/tasks), instrumented
// one way. Prints {rps, cpuMicrosPerRequest, heapUsedMB, rssMB, recorded, sample} as JSON on stdout.
//   node compare-sentry-worker.mjs <variant> <requests> <concurrency> [sentryDsn] [traceSampleRate=1] [--counted=N]
// Forked with an IPC channel, it warms up with <requests> and then runs the windows its coordinator asks for. With
// --counted=N (agent-instructions.mjs stdio, under callgrind), it warms up with <requests> and runs one window of N
// for its coordinator to count (counted-window.mjs); its CPU figures are then undefined.
// variants: bare | metrics | spans (extscope) | sentry (@sentry/node wrapMcpServerWithSentry) | wrapper (OTel span per request)
//   | loaded (what `metrics` loads and builds, the instrumentation constructed disabled: the cost of the code alone)
import { createRequire } from 'node:module';
import { countedWindow } from './counted-window.mjs';
import { lanes } from './lanes.mjs';
import { measureOrServeWindows } from './timed-windows.mjs';

const counted = process.argv.find((arg) => arg.startsWith('--counted='))?.slice('--counted='.length);
const [variant, requestsArg, concurrencyArg, dsn, sampleArg] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const sampleRate = Number(sampleArg ?? 1);
const requests = Number(requestsArg ?? 20_000);
const concurrency = Number(concurrencyArg ?? 16);
const TASKS = 'io.modelcontextprotocol/tasks';

/** What the telemetry holds about one request, as exported: a few samples are kept, the rest only counted. */
const kept = { spans: [], spanCount: 0 };
let instrument = (server) => server;
let readCounts;
let finish = async () => undefined;

if (variant === 'metrics' || variant === 'spans' || variant === 'wrapper') {
  const { context, trace } = await import('@opentelemetry/api');
  const { MeterProvider } = await import('@opentelemetry/sdk-metrics');
  const { OnDemandReader } = await import('../support/on-demand-reader.mjs');
  // As the zero-code entry sets it up: metrics only loads nothing of tracing and installs no context manager
  // (it would cost every promise).
  let tracerProvider;
  if (variant !== 'metrics') {
    const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
    const { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } = await import('@opentelemetry/sdk-trace-base');
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    // Exporters that count and keep a sample: the benchmark measures the request path, not a network.
    const keepSpans = {
      export(spans, done) {
        kept.spanCount += spans.length;
        for (const span of spans) if (kept.spans.length < 3) kept.spans.push({ name: span.name, attributes: span.attributes });
        done({ code: 0 });
      },
      shutdown: async () => undefined,
    };
    tracerProvider = new BasicTracerProvider({
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(sampleRate) }),
      spanProcessors: [new BatchSpanProcessor(keepSpans, { maxQueueSize: 100_000, maxExportBatchSize: 1000 })],
    });
    trace.setGlobalTracerProvider(tracerProvider);
    finish = () => tracerProvider.forceFlush();
  }
  if (variant === 'wrapper') {
    // What a user writes by hand: one SERVER span per request, around the SDK's dispatch of each message.
    const tracer = tracerProvider.getTracer('hand-written');
    instrument = (server) => {
      const connect = server.connect.bind(server);
      server.connect = async (transport) => {
        const result = await connect(transport);
        const dispatch = transport.onmessage;
        const open = new Map();
        transport.onmessage = (message, extra) => {
          if (message.method === undefined || message.id === undefined) return dispatch(message, extra);
          const span = tracer.startSpan(`${message.method}`, { kind: 1, attributes: { 'mcp.method.name': message.method, 'jsonrpc.request.id': String(message.id) } });
          open.set(message.id, span);
          return context.with(trace.setSpan(context.active(), span), () => dispatch(message, extra));
        };
        const send = transport.send.bind(transport);
        transport.send = (message, options) => {
          const span = message.id === undefined ? undefined : open.get(message.id);
          if (span !== undefined) {
            open.delete(message.id);
            if (message.error !== undefined) span.setAttribute('error.type', String(message.error.code));
            span.end();
          }
          return send(message, options);
        };
        return result;
      };
      return server;
    };
  } else {
    const { ExtscopeInstrumentation } = await import('@extscope/agent');
    const reader = new OnDemandReader();
    const instrumentation = new ExtscopeInstrumentation({ spans: variant === 'spans' });
    instrumentation.setMeterProvider(new MeterProvider({ readers: [reader] }));
    if (tracerProvider !== undefined) instrumentation.setTracerProvider(tracerProvider);
    readCounts = async () => {
      const { resourceMetrics } = await reader.collect();
      const metrics = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
      const points = (name) => metrics.filter((metric) => metric.descriptor.name === name).flatMap((metric) => metric.dataPoints);
      return {
        counted: points('extscope.requests').reduce((sum, point) => sum + point.value, 0),
        metricSample: points('extscope.extension.requests').slice(0, 2).map((point) => point.attributes),
      };
    };
  }
}

if (variant === 'loaded') {
  const { MeterProvider } = await import('@opentelemetry/sdk-metrics');
  const { ExtscopeInstrumentation } = await import('@extscope/agent');
  const instrumentation = new ExtscopeInstrumentation({ spans: false, enabled: false });
  instrumentation.setMeterProvider(new MeterProvider());
  // Held, so nothing of it is collected before the measurement.
  globalThis.extscopeBenchLoaded = instrumentation;
}

let Sentry;
if (variant === 'sentry') {
  Sentry = await import('@sentry/node');
  // Every transaction sampled unless told otherwise (as the spans variants record every request); events go to the benchmark's
  // loopback sink, never the internet.
  Sentry.init({ dsn, tracesSampleRate: sampleRate, sendDefaultPii: false, release: 'bench' });
  instrument = (server) => Sentry.wrapMcpServerWithSentry(server);
  finish = () => Sentry.flush(10_000);
}

const require = createRequire(import.meta.url);
const { McpServer, InMemoryTransport } = require('@modelcontextprotocol/server');
const { serveStdio } = require('@modelcontextprotocol/server/stdio');
const { Client } = await import('@modelcontextprotocol/client');
const { z } = await import('zod');

const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
// Every request the client sends (the connect's own discover probe included): what an exact record must count.
let requestsSent = 0;
const clientSend = clientSide.send.bind(clientSide);
clientSide.send = (message, options) => {
  if (message.method !== undefined && message.id !== undefined) requestsSent++;
  return clientSend(message, options);
};
serveStdio(
  () => {
    const server = new McpServer({ name: 'bench', version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {} } } });
    server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
    return instrument(server);
  },
  { transport: serverSide },
);
const client = new Client({ name: 'bench-client', version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: 'auto' } });
await client.connect(clientSide);

const { drive, sent } = lanes(concurrency, () => client.callTool({ name: 'echo', arguments: { text: 'hi' } }));

const { rps, cpuMicrosPerRequest, mainMicrosPerRequest } =
  counted === undefined ? await measureOrServeWindows(drive, requests, Math.min(2000, requests)) : await countedWindow(drive, requests, Number(counted)).then(() => ({}));
await finish();
globalThis.gc?.();
const memory = process.memoryUsage();
const counts = readCounts === undefined ? undefined : await readCounts();
process.stdout.write(
  `${JSON.stringify({
    variant,
    sent: sent(),
    rps,
    cpuMicrosPerRequest,
    mainMicrosPerRequest,
    heapUsedMB: memory.heapUsed / 2 ** 20,
    rssMB: memory.rss / 2 ** 20,
    spansExported: kept.spanCount,
    spanSample: kept.spans,
    requestsSent,
    counted: counts?.counted,
    metricSample: counts?.metricSample,
  })}\n`,
);
await client.close();
process.exit(0);
