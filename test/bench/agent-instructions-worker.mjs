// One variant of agent-instructions.mjs, run under callgrind with its instrumentation off: in `entry` mode the
// server side of an HTTP MCP server alone (as agent-http-entry-worker.mjs), in `loopback` mode the server behind
// node:http with a real client in the process (as agent-http-worker.mjs), warmed up, then one measured window its
// coordinator switches callgrind's counting on around.
//   node agent-instructions-worker.mjs <entry|loopback> <bare|metrics> <warm-up requests> <measured requests> <concurrency>
// Says `ready <pid>` on stderr once warm and waits for SIGUSR2; runs the measured requests and says `done <pid>`;
// on the next SIGUSR2 prints {variant, sent, counted} as JSON on stdout and exits.
import { entryLanes, httpEchoWorker, loopbackLanes } from './http-echo-worker.mjs';

const [mode, variantArg, warmUpArg, measuredArg, concurrencyArg] = process.argv.slice(2);
if (mode !== 'entry' && mode !== 'loopback') throw new Error(`mode ${mode}: entry or loopback`);
// The warm-up is httpEchoWorker's request count.
const { variant, requests: warmUp, concurrency, readCounts, handler, require } = await httpEchoWorker([variantArg, warmUpArg, concurrencyArg]);
const { drive, sent, close } = mode === 'entry' ? entryLanes(handler, concurrency) : await loopbackLanes(handler, require, concurrency);
// One listener for the whole run. With a `once` per wait, SIGUSR2 is back at its default action (which ends the
// process) between waits, and a run under valgrind once lost its worker to a signal it was waiting for.
let wake = () => {};
process.on('SIGUSR2', () => wake());
/** The next SIGUSR2; asked for before the line that lets the coordinator send it. */
const signalled = () => new Promise((resolve) => (wake = resolve));

// A signal listener does not keep the event loop alive; a timer that never fires does, at no cost per request.
const keepAlive = setInterval(() => {}, 2 ** 30);
await drive(warmUp);
const started = signalled();
process.stderr.write(`ready ${process.pid}\n`);
await started;
await drive(Number(measuredArg));
const dumped = signalled();
process.stderr.write(`done ${process.pid}\n`);
await dumped;
clearInterval(keepAlive);
process.stdout.write(`${JSON.stringify({ variant, sent: sent(), counted: await readCounts() })}\n`);
await close();
process.exit(0);
