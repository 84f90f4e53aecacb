// The agent's own cost per request (metrics only), measured inside one process, where the machine's drift between
// processes cannot blur it: two copies of the same v2 server behind serveStdio over in-memory wires, one connected
// before the agent was enabled (so never observed), one after (observed, counting into a meter provider). The same
// raw JSON-RPC client drives them in alternating windows: the `tools/call` message a v2 client sends (2026-07-28
// envelope, declaring io.modelcontextprotocol/tasks), as a fresh object per request, as if just parsed off a wire.
// No SDK client runs in the timed windows, so the figures are the server's work alone. Each observed window is
// paired with the unobserved one next to it; the medians of the paired differences are reported.
//
// What this does not show: the cost of having the agent's and the OpenTelemetry SDK's code loaded at all (both
// servers share one heap), which compare-sentry.mjs and agent-stdio.mjs include.
//   node test/bench/agent-cost.mjs [windows=60] [requests per window=2000] [concurrency=16]
import { createRequire } from 'node:module';
import { mainThreadMicros } from './lib/main-thread-cpu.mjs';
import { checkExact } from './lib/exactness.mjs';
import { alternated } from './lib/interleaved.mjs';
import { median, percent, quartiles } from './lib/paired-stats.mjs';
import { numericArgs } from './lib/smoke.mjs';

const [windows, perWindow, concurrency] = numericArgs(process.argv.slice(2), [
  [60, 4],
  [2000, 100],
  [16, 16],
]);
const TASKS = 'io.modelcontextprotocol/tasks';
const require = createRequire(import.meta.url);
const { z } = await import('zod');
const { Client } = await import('@modelcontextprotocol/client');

/** Serves one v2 McpServer through `serveStdio` on an in-memory wire; returns the client side, connected by a real client. */
async function serve(serveStdio, McpServer, InMemoryTransport) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  serveStdio(
    () => {
      const server = new McpServer({ name: 'bench', version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {} } } });
      server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
      return server;
    },
    { transport: serverSide },
  );
  // A real client opens the connection (discovery, the modern envelope), and shows what a tools/call looks like.
  let template;
  const send = clientSide.send.bind(clientSide);
  clientSide.send = (message, options) => {
    if (message.method === 'tools/call') template ??= JSON.stringify(message);
    return send(message, options);
  };
  const client = new Client(
    { name: 'bench-client', version: '1.0.0' },
    { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: 'auto' } },
  );
  await client.connect(clientSide);
  await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
  clientSide.send = send;
  // From here on the raw client owns the connection: answers are routed by id, nothing else reads them.
  const waiting = new Map();
  let nextId = 1_000_000;
  let answered = 0;
  clientSide.onmessage = (message) => {
    const resolve = waiting.get(message.id);
    if (resolve === undefined) return;
    waiting.delete(message.id);
    if (message.error !== undefined || message.result?.isError === true) throw new Error(`request ${message.id} failed: ${JSON.stringify(message)}`);
    answered++;
    resolve();
  };
  const request = () => {
    const message = JSON.parse(template);
    message.id = nextId++;
    return new Promise((resolve) => {
      waiting.set(message.id, resolve);
      void clientSide.send(message);
    });
  };
  const drive = async (total) => {
    let sent = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (sent < total) {
          sent++;
          await request();
        }
      }),
    );
  };
  return { drive, answered: () => answered, sentByClient: () => nextId - 1_000_000 };
}

// The unobserved copy: connected before anything of extscope is loaded.
const stdioBefore = require('@modelcontextprotocol/server/stdio');
const serverBefore = require('@modelcontextprotocol/server');
const bare = await serve(stdioBefore.serveStdio, serverBefore.McpServer, serverBefore.InMemoryTransport);

// The agent, metrics only, as the zero-code entry sets it up (no context manager, no tracer provider).
const { MeterProvider } = await import('@opentelemetry/sdk-metrics');
const { OnDemandReader } = await import('../support/on-demand-reader.mjs');
const { ExtscopeInstrumentation } = await import('@extscope/agent');
const reader = new OnDemandReader();
const instrumentation = new ExtscopeInstrumentation({ spans: false });
instrumentation.setMeterProvider(new MeterProvider({ readers: [reader] }));
// Loaded afresh, the entry modules are patched now (the unobserved copy keeps the functions it was given; the
// classes, in the package's shared chunks, are the same ones).
for (const id of ['@modelcontextprotocol/server', '@modelcontextprotocol/server/stdio']) delete require.cache[require.resolve(id)];
const stdioAfter = require('@modelcontextprotocol/server/stdio');
const serverAfter = require('@modelcontextprotocol/server');
if (stdioAfter.serveStdio === stdioBefore.serveStdio) throw new Error('serveStdio was not patched: the observed copy would not be observed');
const observed = await serve(stdioAfter.serveStdio, serverAfter.McpServer, serverAfter.InMemoryTransport);

async function timed(side) {
  const cpu = process.cpuUsage();
  const main = mainThreadMicros();
  await side.drive(perWindow);
  const all = process.cpuUsage(cpu);
  return { all: (all.user + all.system) / perWindow, main: (mainThreadMicros() - main) / perWindow };
}

// Warm-up: both copies, until the JIT has settled.
for (let i = 0; i < 4; i++) {
  await bare.drive(perWindow);
  await observed.drive(perWindow);
}
// Which copy goes first alternates, so neither always runs right after a collection the other caused.
const sides = { bare, observed };
const windowsOf = await alternated(['bare', 'observed'], windows, (side) => timed(sides[side]));
const pairs = windowsOf.bare.map((bareWindow, index) => ({ bare: bareWindow, observed: windowsOf.observed[index] }));

const { resourceMetrics } = await reader.collect();
const counted = resourceMetrics.scopeMetrics
  .flatMap((scope) => scope.metrics)
  .filter((metric) => metric.descriptor.name === 'extscope.requests')
  .flatMap((metric) => metric.dataPoints)
  .reduce((sum, point) => sum + point.value, 0);

const row = (label, key) => {
  const bareMedian = median(pairs.map((pair) => pair.bare[key]));
  const observedMedian = median(pairs.map((pair) => pair.observed[key]));
  const differences = pairs.map((pair) => pair.observed[key] - pair.bare[key]);
  const ratios = pairs.map((pair) => pair.observed[key] / pair.bare[key]);
  const [low, high] = quartiles(differences);
  const [lowRatio, highRatio] = quartiles(ratios);
  return `| ${label} | ${bareMedian.toFixed(2)} | ${observedMedian.toFixed(2)} | ${median(differences).toFixed(2)} (${low.toFixed(2)}..${high.toFixed(2)}) | ${percent(median(ratios))} (${percent(lowRatio)}..${percent(highRatio)}) |`;
};

console.log(
  `agent cost in one process: ${windows} window pairs × ${perWindow} tools/call requests, ${concurrency} in flight, raw 2026-07-28 client, Node ${process.version}`,
);
console.log('');
console.log(
  '| CPU per request | unobserved server µs | observed (metrics only) µs | difference µs (paired median, quartiles) | ratio (paired median, quartiles) |',
);
console.log('| --- | ---: | ---: | ---: | ---: |');
console.log(row('main thread', 'main'));
console.log(row('all threads', 'all'));
console.log('');
const sentObserved = observed.sentByClient() + 2; // and the real client's discovery probe and tools/call
console.log(
  `observed copy: ${observed.answered()} raw requests answered, ${counted} requests counted by the agent (the raw ones and the real client's ${sentObserved - observed.sentByClient()})`,
);
checkExact('observed copy: requests counted of those sent', counted, sentObserved);
process.exit(0);
