// One variant of agent-instructions.mjs, run under callgrind with its instrumentation off: in `entry` mode the
// server side of an HTTP MCP server alone (as agent-http-entry-worker.mjs), in `loopback` mode the server behind
// node:http with a real client in the process (as agent-http-worker.mjs), warmed up, then one measured window its
// coordinator switches callgrind's counting on around.
//   node agent-instructions-worker.mjs <entry|loopback> <bare|metrics> <warm-up requests> <measured requests> <concurrency>
// The window's protocol is counted-window.mjs's; after it, prints {variant, sent, counted} as JSON on stdout and exits.
import { countedWindow } from '../lib/counted-window.mjs';
import { entryLanes, httpEchoWorker, loopbackLanes } from '../lib/http-echo-worker.mjs';

const [mode, variantArg, warmUpArg, measuredArg, concurrencyArg] = process.argv.slice(2);
if (mode !== 'entry' && mode !== 'loopback') throw new Error(`mode ${mode}: entry or loopback`);
// The warm-up is httpEchoWorker's request count.
const { variant, requests: warmUp, concurrency, readCounts, handler, require } = await httpEchoWorker([variantArg, warmUpArg, concurrencyArg]);
const { drive, sent, close } = mode === 'entry' ? entryLanes(handler, concurrency) : await loopbackLanes(handler, require, concurrency);
await countedWindow(drive, warmUp, Number(measuredArg));
process.stdout.write(`${JSON.stringify({ variant, sent: sent(), counted: await readCounts() })}\n`);
await close();
process.exit(0);
