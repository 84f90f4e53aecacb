// One variant of `agent-http.mjs entry` in its own process (patching is process-wide): the server side of an HTTP
// MCP server alone, `createMcpHandler(...).fetch` (a fresh McpServer per request) called with Fetch API requests
// as a fetch-native runtime calls it, no client and no socket in the measured process: what the agent adds to
// the server's own work per request.
// Prints {rps, cpuMicrosPerRequest, mainMicrosPerRequest, requestsSent, counted} as JSON on stdout.
//   node agent-http-entry-worker.mjs <bare|metrics> <requests> <concurrency>
// Forked with an IPC channel, it warms up with <requests> and then runs the windows its coordinator asks for.
import { lanes } from './lanes.mjs';
import { TASKS, httpEchoWorker } from './http-echo-worker.mjs';
import { measureOrServeWindows } from './timed-windows.mjs';

const { variant, requests, concurrency, readCounts, handler } = await httpEchoWorker();

// What a 2026-07-28 SDK client sends for callTool: the envelope in _meta, the standard headers.
const meta = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'bench-client', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
};
const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' };
let requestsSent = 0;
const { drive } = lanes(concurrency, async () => {
  const body = JSON.stringify({ jsonrpc: '2.0', id: requestsSent++, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' }, _meta: meta } });
  const response = await handler.fetch(new Request('http://127.0.0.1/mcp', { method: 'POST', headers, body }));
  const text = await response.text();
  if (response.status !== 200 || !text.includes('"hi"')) throw new Error(`unexpected answer: ${response.status} ${text}`);
});

const { rps, cpuMicrosPerRequest, mainMicrosPerRequest } = await measureOrServeWindows(drive, requests, Math.min(500, requests));
const counted = await readCounts();
process.stdout.write(`${JSON.stringify({ variant, rps, cpuMicrosPerRequest, mainMicrosPerRequest, requestsSent, counted })}\n`);
await handler.close();
process.exit(0);
