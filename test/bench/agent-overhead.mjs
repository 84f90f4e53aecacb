// The agent's overhead on an in-process MCP server, and what it is made of, with the machine's drift taken out:
// workers/inmemory-server.mjs's server (serveStdio over an in-memory wire, a 2026-07-28 client in the same process)
// in one warm process per variant, run window by window in turn (lib/interleaved.mjs); per round (fresh processes
// each), each variant's requests/s and CPU per request over all its windows against the uninstrumented one's; over
// the rounds, the median, quartiles and a 95 % bootstrap interval of the median. Also prints, per variant, the
// collections V8 reported in the windows, and the heap after a stream of requests declaring made-up extension ids.
//   node test/bench/agent-overhead.mjs [rounds=12] [windows=30] [requests per window=1000] [concurrency=16] [--variants=bare,metrics,...]
// variants: bare (uninstrumented), loaded (the agent and the OpenTelemetry metrics SDK loaded and built, not
// enabled), otel (the OpenTelemetry metrics and tracing SDKs with a context manager, no agent), metrics (the agent,
// metrics only, as the zero-code entry sets it up), wire (the same with the wire fallback on), spans (the agent,
// metrics + spans), wrapper (a hand-written span-per-request wrapper).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { checkExact } from './lib/exactness.mjs';
import { interleavedRound, roundFigures } from './lib/interleaved.mjs';
import { median, pairedSummary } from './lib/paired-stats.mjs';
import { numericArgs, size } from './lib/smoke.mjs';

const run = promisify(execFile);
const worker = fileURLToPath(new URL('./workers/inmemory-server.mjs', import.meta.url));
const args = process.argv.slice(2);
const [rounds, windows, requests, concurrency] = numericArgs(
  args.filter((arg) => !arg.startsWith('--')),
  [
    [12, 1],
    [30, 2],
    [1000, 100],
    [16, 16],
  ],
);
const labels = {
  bare: 'uninstrumented',
  loaded: 'agent and OpenTelemetry SDK loaded, not enabled',
  otel: 'OpenTelemetry SDKs, no agent',
  metrics: 'agent, metrics only',
  wire: 'agent, metrics, wire fallback',
  spans: 'agent, metrics + spans',
  wrapper: 'plain span-per-request wrapper',
};
const variants =
  args
    .find((arg) => arg.startsWith('--variants='))
    ?.slice('--variants='.length)
    .split(',') ?? Object.keys(labels);
if (variants[0] !== 'bare' || variants.some((variant) => labels[variant] === undefined))
  throw new Error(`--variants: bare first, then any of ${Object.keys(labels).join(', ')}`);
const warmUp = size(5000, 200);

const results = Object.fromEntries(variants.map((variant) => [variant, []]));
const counting = variants.filter((variant) => ['metrics', 'wire', 'spans'].includes(variant));
for (let round = 0; round < rounds; round++) {
  const order = variants.map((_, index) => variants[(index + round) % variants.length]);
  const result = await interleavedRound(worker, order, (variant) => [variant, String(warmUp), String(concurrency)], windows, requests);
  for (const variant of variants) results[variant].push(roundFigures(result[variant]));
  // Every request each client sent (its connect's probe, the warm-up, every window), counted by the agent.
  for (const variant of counting)
    checkExact(`round ${round + 1}, ${labels[variant]}: requests counted of those sent`, result[variant].report.counted, result[variant].report.requestsSent);
  process.stderr.write(
    `round ${round + 1}/${rounds}: ${variants.map((variant) => `${variant} ${results[variant].at(-1).cpu.toFixed(1)}/${results[variant].at(-1).main.toFixed(1)} µs`).join(', ')}\n`,
  );
}

const versus = (variant, key) => (variant === 'bare' ? '–' : pairedSummary(results[variant], results.bare, key));
const of = (variant, key) => median(results[variant].map((row) => row[key])).toFixed(key === 'rps' ? 0 : 1);

console.log(
  `agent overhead, interleaved: ${rounds} rounds × ${windows} windows × ${requests} tools/call per variant (after ${warmUp} to warm up), ${concurrency} in flight, in-memory wire, client in the same process, Node ${process.version}`,
);
console.log('');
console.log(
  '| variant | req/s | vs uninstrumented (paired median; quartiles; 95 % interval of the median) | CPU µs/request | vs uninstrumented | main thread µs | vs uninstrumented |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const variant of variants) {
  console.log(
    `| ${labels[variant]} | ${of(variant, 'rps')} | ${versus(variant, 'rps')} | ${of(variant, 'cpu')} | ${versus(variant, 'cpu')} | ${of(variant, 'main')} | ${versus(variant, 'main')} |`,
  );
}
console.log('');
console.log('Garbage collection, per request (main-thread pauses as V8 reports them; young- and old-generation collections per 1,000 requests):');
console.log('');
console.log('| variant | collection pauses µs | vs uninstrumented | main thread outside them µs | vs uninstrumented | young / 1,000 | old / 1,000 |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const variant of variants) {
  console.log(
    `| ${labels[variant]} | ${of(variant, 'gc')} | ${versus(variant, 'gc')} | ${of(variant, 'outsideGc')} | ${versus(variant, 'outsideGc')} | ${of(variant, 'minorGcs')} | ${median(results[variant].map((row) => row.majorGcs)).toFixed(2)} |`,
  );
}

// Memory under junk: every request declares one of many made-up extension ids; the agent keeps at most its cap of
// streams. One process each, no coordinator: heap after a full collection, not time.
const junk = { requests: size(100_000, 2000), ids: size(10_000, 500) };
const memory = async (variant) =>
  JSON.parse(
    (
      await run(process.execPath, ['--expose-gc', worker, variant, String(junk.requests), String(concurrency), `--junk=${junk.ids}`], {
        maxBuffer: 16 * 2 ** 20,
      })
    ).stdout,
  );
const bareMemory = await memory('bare');
const agentMemory = await memory('spans');
console.log('');
console.log(`memory after ${junk.requests} requests carrying ${junk.ids} distinct junk extension ids (heap after GC):`);
console.log(`  uninstrumented:          ${bareMemory.heapUsedMB.toFixed(1)} MiB`);
console.log(
  `  agent (metrics + spans): ${agentMemory.heapUsedMB.toFixed(1)} MiB (+${(agentMemory.heapUsedMB - bareMemory.heapUsedMB).toFixed(1)} MiB); metric streams: ${agentMemory.streams.requests} request, ${agentMemory.streams.extensions} extension (cap 10000)`,
);
checkExact('junk ids, agent (metrics + spans): requests counted of those sent', agentMemory.counted, agentMemory.requestsSent);
