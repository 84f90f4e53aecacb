// What the HTTP benchmark workers set up alike: their arguments, the variant (before the SDK is loaded, so the
// agent's hooks patch it) and a `createMcpHandler` serving an `echo` tool from a fresh McpServer per request;
// for the workers that call the handler directly, the calls a 2026-07-28 client makes.
//   node <worker> <bare|metrics> <requests> <concurrency>
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { lanes } from './lanes.mjs';

export const TASKS = 'io.modelcontextprotocol/tasks';

/** What each way of driving the handler measures, as the benchmarks print it. */
export const HTTP_SETTINGS = {
  entry: 'createMcpHandler().fetch called with Fetch API requests, server side alone',
  loopback: 'createMcpHandler behind node:http on loopback, client in the same process',
};

/**
 * Sets up a benchmark worker's variant: `bare` loads nothing; `metrics` enables the agent as the zero-code entry
 * does for metrics only (a meter provider, no tracing, no context manager), read on demand. Call it before the
 * MCP SDK is required, so the agent's hooks patch it. Resolves to what reads the requests counted so far
 * (`undefined` for `bare`).
 */
async function metricsOnlyVariant(variant) {
  if (variant !== 'metrics') return async () => undefined;
  const { MeterProvider } = await import('@opentelemetry/sdk-metrics');
  const { OnDemandReader } = await import('../../support/on-demand-reader.mjs');
  const { ExtscopeInstrumentation } = await import('@extscope/agent');
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

/** `args`: <bare|metrics> <requests> <concurrency>, the worker's own arguments unless given. */
export async function httpEchoWorker(args = process.argv.slice(2)) {
  const [variant, requestsArg, concurrencyArg] = args;
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

// What a 2026-07-28 SDK client sends for callTool: the envelope in _meta, the standard headers.
const meta = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'bench-client', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
};
const headers = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'echo',
};

/** Requests between turns of the event loop in {@link entryLanes}. */
const REQUESTS_PER_TURN = 256;

/**
 * Calls `handler.fetch` with Fetch API requests as a fetch-native runtime does, no client and no socket:
 * `drive(total)` makes `total` more tools/call requests, `concurrency` in flight; `sent()` counts them all;
 * `close()` closes the handler.
 *
 * The event loop turns after every {@link REQUESTS_PER_TURN} requests. Without those turns a drive is a single
 * job (nothing waits on I/O), and V8 keeps a `WeakRef`'s target alive until the job that made it ends: each
 * `Request` holds an AbortController that way, so every request's controller, signal and listener (about 1 KB)
 * stayed alive to the end of the drive, the live heap grew by 8 MB every 8,000 requests, and each full GC cost more
 * than the last, more in the variant that allocates more. Not a turn per request, as a server reading sockets
 * takes: that makes the requests run one after another, and costs the uninstrumented server a fifth more per request
 * here, which would dilute the agent's share.
 */
export function entryLanes(handler, concurrency) {
  const driven = lanes(concurrency, async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: driven.sent(), method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' }, _meta: meta } });
    const response = await handler.fetch(new Request('http://127.0.0.1/mcp', { method: 'POST', headers, body }));
    const text = await response.text();
    if (response.status !== 200 || !text.includes('"hi"')) throw new Error(`unexpected answer: ${response.status} ${text}`);
  });
  async function drive(total) {
    for (let left = total; left > 0; left -= REQUESTS_PER_TURN) {
      await driven.drive(Math.min(left, REQUESTS_PER_TURN));
      await nextTurn();
    }
  }
  return { drive, sent: driven.sent, close: () => handler.close() };
}

/**
 * Serves `handler` with node:http on loopback through @modelcontextprotocol/node and drives it with a real
 * 2026-07-28 SDK client in the same process calling the echo tool: `drive(total)` makes `total` more calls,
 * `concurrency` in flight; `sent()` counts every request the client sent over HTTP (its discover probe included),
 * which is what an exact record must count; `close()` ends the client and the server.
 */
export async function loopbackLanes(handler, require, concurrency) {
  const { toNodeHandler } = require('@modelcontextprotocol/node');
  const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
  // No idle timeout: a socket the server closes as idle just as the client picks it for a request fails that request
  // (ECONNRESET), which under valgrind, where time runs fifty times slower, happens within minutes.
  const http = createServer({ keepAliveTimeout: 0 }, toNodeHandler(handler));
  await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = new URL(`http://127.0.0.1:${http.address().port}/mcp`);
  let sent = 0;
  const countingFetch = (input, init) => {
    if (init?.method === 'POST' && typeof init.body === 'string' && init.body.includes('"id"')) sent++;
    return fetch(input, init);
  };
  const client = new Client(
    { name: 'bench-client', version: '1.0.0' },
    { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: 'auto' } },
  );
  await client.connect(new StreamableHTTPClientTransport(url, { fetch: countingFetch }));
  const { drive } = lanes(concurrency, () => client.callTool({ name: 'echo', arguments: { text: 'hi' } }));
  async function close() {
    await client.close();
    await new Promise((resolve) => http.close(resolve));
  }
  return { drive, sent: () => sent, close };
}
