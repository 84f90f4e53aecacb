// One variant of `agent-http.mjs entry` in its own process (patching is process-wide): the server side of an HTTP
// MCP server alone, `createMcpHandler(...).fetch` (a fresh McpServer per request) called with Fetch API requests
// as a fetch-native runtime calls it, no client and no socket in the measured process: what the agent adds to
// the server's own work per request.
// Prints {rps, cpuMicrosPerRequest, mainMicrosPerRequest, requestsSent, counted} as JSON on stdout.
//   node agent-http-entry-worker.mjs <bare|metrics> <requests> <concurrency>
// Forked with an IPC channel, it warms up with <requests> and then runs the windows its coordinator asks for.
import { entryLanes, httpEchoWorker } from '../lib/http-echo-worker.mjs';
import { measureOrServeWindows } from '../lib/timed-windows.mjs';

const { variant, requests, concurrency, readCounts, handler } = await httpEchoWorker();
const { drive, sent, close } = entryLanes(handler, concurrency);

const { rps, cpuMicrosPerRequest, mainMicrosPerRequest } = await measureOrServeWindows(drive, requests, Math.min(500, requests));
const counted = await readCounts();
process.stdout.write(`${JSON.stringify({ variant, rps, cpuMicrosPerRequest, mainMicrosPerRequest, requestsSent: sent(), counted })}\n`);
await close();
process.exit(0);
