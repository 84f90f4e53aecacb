// What both HTTP benchmark workers set up alike: their arguments, the variant (before the SDK is loaded, so the
// agent's hooks patch it) and a `createMcpHandler` serving an `echo` tool from a fresh McpServer per request.
//   node <worker> <bare|metrics> <requests> <concurrency>
import { createRequire } from 'node:module';

export const TASKS = 'io.modelcontextprotocol/tasks';

/**
 * Sets up a benchmark worker's variant: `bare` loads nothing; `metrics` enables the agent as the zero-code entry
 * does for metrics only (a meter provider, no tracing, no context manager), read on demand. Call it before the
 * MCP SDK is required, so the agent's hooks patch it. Resolves to what reads the requests counted so far
 * (`undefined` for `bare`).
 */
async function metricsOnlyVariant(variant) {
  if (variant !== 'metrics') return async () => undefined;
  const { MeterProvider } = await import('@opentelemetry/sdk-metrics');
  const { OnDemandReader } = await import('../support/on-demand-reader.mjs');
  const { ExtscopeInstrumentation } = await import('extscope');
  const reader = new OnDemandReader();
  new ExtscopeInstrumentation({ spans: false }).setMeterProvider(new MeterProvider({ readers: [reader] }));
  return async () => {
    const { resourceMetrics } = await reader.collect();
    return resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .filter((metric) => metric.descriptor.name === 'extscope.requests')
      .flatMap((metric) => metric.dataPoints)
      .reduce((sum, point) => sum + point.value, 0);
  };
}

export async function httpEchoWorker() {
  const [variant, requestsArg, concurrencyArg] = process.argv.slice(2);
  const readCounts = await metricsOnlyVariant(variant);
  const require = createRequire(import.meta.url);
  const { McpServer, createMcpHandler } = require('@modelcontextprotocol/server');
  const { z } = await import('zod');
  const handler = createMcpHandler(() => {
    const server = new McpServer({ name: 'bench', version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {} } } });
    server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
    return server;
  });
  return { variant, requests: Number(requestsArg ?? 3000), concurrency: Number(concurrencyArg ?? 16), readCounts, handler, require };
}
