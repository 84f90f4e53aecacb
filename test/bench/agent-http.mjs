// The agent's metrics-only overhead on an HTTP server, createMcpHandler uninstrumented and with the agent, each in
// its own warm process, run window by window in turn (interleaved.mjs); per round, each variant's requests/s and
// CPU per request (all threads, main thread) over all its windows against the uninstrumented one's; over the
// rounds (fresh processes each), the median, quartiles and a 95 % bootstrap interval of the median.
//   node test/bench/agent-http.mjs [loopback|entry] [rounds=10] [windows=12] [requests per window=300] [concurrency=16] [warm-up]
// loopback (the default): agent-http-worker.mjs, behind node:http on loopback, a real client in the same process.
// entry: agent-http-entry-worker.mjs, the server side alone (`handler.fetch` with Fetch API requests), where the
// agent's share of the server's own work shows undiluted by a client and a socket.
// The warm-up (25,000 requests per process for the entry, 20,000 for loopback, about half a minute either way) lets
// V8's optimizing compiler settle, so the windows measure a long-running server: traced with --trace-opt on the
// entry, optimizations all but stop after about 24,000.
import { fileURLToPath } from 'node:url';
import { HTTP_SETTINGS } from './lib/http-echo-worker.mjs';
import { interleavedRound, roundFigures } from './lib/interleaved.mjs';
import { checkExact } from './lib/exactness.mjs';
import { median, pairedSummary } from './lib/paired-stats.mjs';
import { numericArgs } from './lib/smoke.mjs';

const args = process.argv.slice(2);
const mode = args[0] === 'entry' || args[0] === 'loopback' ? args.shift() : 'loopback';
const worker = fileURLToPath(new URL(mode === 'entry' ? './workers/http-entry.mjs' : './workers/http-loopback.mjs', import.meta.url));
const [rounds, windows, requests, concurrency, warmUp] = numericArgs(args, [
  [10, 1],
  [12, 2],
  [300, 50],
  [16, 16],
  [mode === 'entry' ? 25_000 : 20_000, 200],
]);
const variants = ['bare', 'metrics'];

const results = { bare: [], metrics: [] };
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? variants : [...variants].reverse();
  const result = await interleavedRound(worker, order, (variant) => [variant, String(warmUp), String(concurrency)], windows, requests);
  for (const variant of variants) results[variant].push(roundFigures(result[variant]));
  checkExact(`round ${round + 1}: requests the agent counted of those its client sent`, result.metrics.report.counted, result.metrics.report.requestsSent);
  process.stderr.write(
    `round ${round + 1}/${rounds}: ${variants.map((variant) => `${variant} ${results[variant].at(-1).cpu.toFixed(1)}/${results[variant].at(-1).main.toFixed(1)} µs`).join(', ')}\n`,
  );
}

const versus = (key) => pairedSummary(results.metrics, results.bare, key);
const of = (variant, key) => median(results[variant].map((row) => row[key])).toFixed(key === 'rps' ? 0 : 1);

console.log(
  `agent overhead on HTTP, interleaved: ${rounds} rounds × ${windows} windows × ${requests} tools/call per variant (after ${warmUp} to warm up), ${concurrency} in flight, ${HTTP_SETTINGS[mode]}, Node ${process.version}`,
);
console.log('');
console.log(
  '| variant | req/s | vs uninstrumented (paired median; quartiles; 95 % interval of the median) | CPU µs/request | vs uninstrumented | main thread µs | vs uninstrumented |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
console.log(`| uninstrumented | ${of('bare', 'rps')} | – | ${of('bare', 'cpu')} | – | ${of('bare', 'main')} | – |`);
console.log(
  `| agent, metrics only | ${of('metrics', 'rps')} | ${versus('rps')} | ${of('metrics', 'cpu')} | ${versus('cpu')} | ${of('metrics', 'main')} | ${versus('main')} |`,
);
