// The server side of agent-stdio.mjs: one v2 McpServer behind serveStdio on this process's stdin/stdout, as an
// MCP client launches it. `bare` is uninstrumented; `metrics` and `spans` run the agent set up as the zero-code
// entry sets it up (metrics only: a meter provider, no tracer provider, no context manager), with exporters
// that accept and discard (the benchmark measures the request path, not a network). On SIGUSR2 it writes its own CPU
// time so far to stderr, so the driver can take the CPU spent between two marks, in microseconds.
//   node agent-stdio-server.mjs <bare|metrics|spans>
import { createRequire } from 'node:module';

const variant = process.argv[2] ?? 'bare';
// Loaded only when used: the uninstrumented server loads none of it.
if (variant !== 'bare') {
  const { context, trace } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { AggregationTemporality, MeterProvider, PeriodicExportingMetricReader } = await import('@opentelemetry/sdk-metrics');
  const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  const { ExtscopeInstrumentation } = await import('extscope');
  const discardMetrics = { export: (_m, done) => done({ code: 0 }), forceFlush: async () => {}, shutdown: async () => {}, selectAggregationTemporality: () => AggregationTemporality.DELTA };
  const discardSpans = { export: (_s, done) => done({ code: 0 }), shutdown: async () => {} };
  const meterProvider = new MeterProvider({ readers: [new PeriodicExportingMetricReader({ exporter: discardMetrics, exportIntervalMillis: 1000 })] });
  const instrumentation = new ExtscopeInstrumentation({ spans: variant === 'spans' });
  instrumentation.setMeterProvider(meterProvider);
  if (variant === 'spans') {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(discardSpans)] });
    trace.setGlobalTracerProvider(tracerProvider);
    instrumentation.setTracerProvider(tracerProvider);
  }
}

process.on('SIGUSR2', () => {
  const { user, system } = process.cpuUsage();
  process.stderr.write(`${JSON.stringify({ cpuMicros: user + system })}\n`);
});

const require = createRequire(import.meta.url);
const { McpServer } = require('@modelcontextprotocol/server');
const { serveStdio } = require('@modelcontextprotocol/server/stdio');
const { z } = await import('zod');

serveStdio(() => {
  const server = new McpServer({ name: 'bench-stdio', version: '1.0.0' }, { capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } });
  server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return server;
});
