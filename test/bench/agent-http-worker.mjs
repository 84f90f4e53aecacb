// One variant of agent-http.mjs in its own process (patching is process-wide): a v2 server behind
// `createMcpHandler` (a fresh McpServer per request) served by node:http on loopback through
// @modelcontextprotocol/node, and a 2026-07-28 client in the same process calling an echo tool over HTTP.
// Prints {rps, cpuMicrosPerRequest, mainMicrosPerRequest, requestsSent, counted} as JSON on stdout.
//   node agent-http-worker.mjs <bare|metrics> <requests> <concurrency>
// Forked with an IPC channel, it warms up with <requests> and then runs the windows its coordinator asks for.
import { createServer } from 'node:http';
import { lanes } from './lanes.mjs';
import { TASKS, httpEchoWorker } from './http-echo-worker.mjs';
import { measureOrServeWindows } from './timed-windows.mjs';

const { variant, requests, concurrency, readCounts, handler, require } = await httpEchoWorker();
const { toNodeHandler } = require('@modelcontextprotocol/node');
const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
const http = createServer(toNodeHandler(handler));
await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
const url = new URL(`http://127.0.0.1:${http.address().port}/mcp`);

// Every request the client sends over HTTP (its discover probe included): what an exact record must count.
let requestsSent = 0;
const countingFetch = (input, init) => {
  if (init?.method === 'POST' && typeof init.body === 'string' && init.body.includes('"id"')) requestsSent++;
  return fetch(input, init);
};
const client = new Client({ name: 'bench-client', version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: 'auto' } });
await client.connect(new StreamableHTTPClientTransport(url, { fetch: countingFetch }));

const { drive } = lanes(concurrency, () => client.callTool({ name: 'echo', arguments: { text: 'hi' } }));

const { rps, cpuMicrosPerRequest, mainMicrosPerRequest } = await measureOrServeWindows(drive, requests, Math.min(500, requests));
const counted = await readCounts();
process.stdout.write(`${JSON.stringify({ variant, rps, cpuMicrosPerRequest, mainMicrosPerRequest, requestsSent, counted })}\n`);
await client.close();
http.close();
process.exit(0);
