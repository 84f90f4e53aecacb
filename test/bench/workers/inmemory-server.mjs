// One variant of the in-memory benchmarks in its own process (patching is process-wide): the same v2 McpServer
// (serveStdio over an in-memory wire, a 2026-07-28 client declaring io.modelcontextprotocol/tasks), instrumented
// one way. Prints {rps, cpuMicrosPerRequest, heapUsedMB, rssMB, recorded, sample} as JSON on stdout.
//   node inmemory-server.mjs <variant> <requests> <concurrency> [traceSampleRate=1] [--counted=N] [--junk=N]
// Forked with an IPC channel, it warms up with <requests> and then runs the windows its coordinator asks for. With
// --counted=N (agent-instructions.mjs stdio, under callgrind), it warms up with <requests> and runs one window of N
// for its coordinator to count (counted-window.mjs); its CPU figures are then undefined. With --junk=N every
// request also declares one of N distinct made-up extension ids (the agent's stream cap at work).
// variants: bare | loaded (what `metrics` loads and builds, the instrumentation constructed disabled: the cost of
//   the code alone) | otel (the metrics and tracing SDKs with a context manager, no agent) | metrics | wire
//   (metrics, wire fallback on, as extscope/register runs it) | spans (extscope) | sentry (@sentry/node
//   wrapMcpServerWithSentry) | wrapper (OTel span per request)
// Every variant that records keeps what it exports in this process (count and a few samples) and answers its SDK at
// once: no variant pays for a network the others do not.
import { createRequire } from 'node:module';
import { countedWindow } from '../lib/counted-window.mjs';
import { lanes } from '../lib/lanes.mjs';
import { measureOrServeWindows } from '../lib/timed-windows.mjs';

const option = (name) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.slice(name.length + 3);
const counted = option('counted');
const junkIds = Number(option('junk') ?? 0);
const [variant, requestsArg, concurrencyArg, sampleArg] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const sampleRate = Number(sampleArg ?? 1);
const requests = Number(requestsArg ?? 20_000);
const concurrency = Number(concurrencyArg ?? 16);
const TASKS = 'io.modelcontextprotocol/tasks';

/** What the telemetry holds about one request, as exported: a few samples are kept, the rest only counted. */
// Sentry's: the traces its spans belong to (it samples a trace, not a request).
const kept = { spans: [], spanCount: 0, traces: new Set() };
let instrument = (server) => server;
let readCounts;
let finish = async () => undefined;

if (variant === 'metrics' || variant === 'wire' || variant === 'spans' || variant === 'wrapper' || variant === 'otel') {
  const { context, trace } = await import('@opentelemetry/api');
  const { MeterProvider } = await import('@opentelemetry/sdk-metrics');
  const { OnDemandReader } = await import('../../support/on-demand-reader.mjs');
  // As the zero-code entry sets it up: metrics only loads nothing of tracing and installs no context manager
  // (it would cost every promise).
  let tracerProvider;
  if (variant !== 'metrics' && variant !== 'wire') {
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
  if (variant === 'otel') {
    // The SDKs set up and nothing using them: what loading OpenTelemetry costs a server by itself.
    globalThis.extscopeBenchMeters = new MeterProvider({ readers: [new OnDemandReader()] });
  } else if (variant === 'wrapper') {
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
          const span = tracer.startSpan(`${message.method}`, {
            kind: 1,
            attributes: { 'mcp.method.name': message.method, 'jsonrpc.request.id': String(message.id) },
          });
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
    // A cardinality limit above the agent's own stream cap, so that every stream it keeps is read back.
    const reader = new OnDemandReader({ cardinalitySelector: () => 1_000_000 });
    const instrumentation = new ExtscopeInstrumentation({ spans: variant === 'spans', wireFallback: variant === 'wire' });
    instrumentation.setMeterProvider(new MeterProvider({ readers: [reader] }));
    if (tracerProvider !== undefined) instrumentation.setTracerProvider(tracerProvider);
    readCounts = async () => {
      const { resourceMetrics } = await reader.collect();
      const metrics = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
      const points = (name) => metrics.filter((metric) => metric.descriptor.name === name).flatMap((metric) => metric.dataPoints);
      return {
        counted: points('extscope.requests').reduce((sum, point) => sum + point.value, 0),
        streams: { requests: points('extscope.requests').length, extensions: points('extscope.extension.requests').length },
        metricSample: points('extscope.extension.requests')
          .slice(0, 2)
          .map((point) => point.attributes),
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
  // Every transaction sampled unless told otherwise (as the spans variants record every request). Its envelopes are
  // counted here before they are serialized, and its transport answers at once, as the OpenTelemetry span exporter
  // above does: Sentry's own work is measured, a network is not. The DSN only enables the client.
  const transport = (options) => Sentry.createTransport(options, async () => ({ statusCode: 200 }));
  Sentry.init({ dsn: 'http://public@127.0.0.1:9/1', transport, tracesSampleRate: sampleRate, sendDefaultPii: false, release: 'bench' });
  Sentry.getClient().on('beforeEnvelope', (envelope) => {
    for (const [header, payload] of envelope[1]) {
      // One MCP request is one span of op `mcp.server` (Sentry 11 streams spans as `span` items; older ones send transactions).
      const spans =
        header.type === 'span'
          ? (payload.items ?? []).map((item) => ({
              name: item.name,
              op: item.attributes?.['sentry.op']?.value,
              attributes: item.attributes,
              trace: item.trace_id,
            }))
          : header.type === 'transaction'
            ? [payload.contexts?.trace, ...(payload.spans ?? [])].map((span) => ({
                name: span?.description,
                op: span?.op,
                attributes: span?.data,
                trace: span?.trace_id,
              }))
            : [];
      for (const span of spans) {
        if (span.op !== 'mcp.server') continue;
        kept.spanCount++;
        kept.traces.add(span.trace);
        if (kept.spans.length < 3) kept.spans.push({ name: span.name, attributes: span.attributes });
      }
    }
  });
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

const CAPS = 'io.modelcontextprotocol/clientCapabilities';
const { drive, sent } = lanes(concurrency, () => {
  if (junkIds === 0) return client.callTool({ name: 'echo', arguments: { text: 'hi' } });
  const junk = sent() % junkIds;
  return client.callTool({
    name: 'echo',
    arguments: { text: 'hi' },
    _meta: { [CAPS]: { extensions: { [TASKS]: {}, [`com.junk${junk}/id-${junk}`]: { junk } } } },
  });
});

const { rps, cpuMicrosPerRequest, mainMicrosPerRequest } =
  counted === undefined
    ? await measureOrServeWindows(drive, requests, Math.min(2000, requests))
    : await countedWindow(drive, requests, Number(counted)).then(() => ({}));
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
    traces: kept.traces.size,
    requestsSent,
    counted: counts?.counted,
    streams: counts?.streams,
    metricSample: counts?.metricSample,
  })}\n`,
);
await client.close();
process.exit(0);
