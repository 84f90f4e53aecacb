// One variant of agent-http.mjs in its own process (patching is process-wide): a v2 server behind
// `createMcpHandler` (a fresh McpServer per request) served by node:http on loopback through
// @modelcontextprotocol/node, and a 2026-07-28 client in the same process calling an echo tool over HTTP.
// Prints {rps, cpuMicrosPerRequest, mainMicrosPerRequest, requestsSent, counted} as JSON on stdout.
//   node agent-http-worker.mjs <bare|metrics> <requests> <concurrency>
// Forked with an IPC channel, it warms up with <requests> and then runs the windows its coordinator asks for.
import { httpEchoWorker, loopbackLanes } from '../lib/http-echo-worker.mjs';
import { measureOrServeWindows } from '../lib/timed-windows.mjs';

const { variant, requests, concurrency, readCounts, handler, require } = await httpEchoWorker();
const { drive, sent, close } = await loopbackLanes(handler, require, concurrency);

const { rps, cpuMicrosPerRequest, mainMicrosPerRequest } = await measureOrServeWindows(drive, requests, Math.min(500, requests));
const counted = await readCounts();
process.stdout.write(`${JSON.stringify({ variant, rps, cpuMicrosPerRequest, mainMicrosPerRequest, requestsSent: sent(), counted })}\n`);
await close();
process.exit(0);
