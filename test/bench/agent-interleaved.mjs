// The agent's metrics-only overhead with the machine's drift taken out: compare-sentry-worker.mjs's server
// uninstrumented, with the agent's code loaded but not enabled, and with the agent at work, each in its own warm
// process, run window by window in turn (interleaved.mjs); per round, each variant's requests/s and CPU per request
// over all its windows against the uninstrumented one's; over the rounds (fresh processes each), the median,
// quartiles and a 95 % bootstrap interval of the median.
// Also prints, per variant, the collections V8 reported in the windows: the main thread's pauses and how many.
//   node test/bench/agent-interleaved.mjs [rounds=12] [windows=30] [requests per window=1000] [concurrency=16]
import { fileURLToPath } from 'node:url';
import { interleavedRound, roundFigures } from './interleaved.mjs';
import { median, pairedSummary } from './paired-stats.mjs';

const worker = fileURLToPath(new URL('./compare-sentry-worker.mjs', import.meta.url));
const [rounds = 12, windows = 30, requests = 1000, concurrency = 16] = process.argv.slice(2).map(Number);
const warmUp = 5000;
const variants = ['bare', 'loaded', 'metrics'];
const labels = { bare: 'uninstrumented', loaded: 'agent and OpenTelemetry SDK loaded, not enabled', metrics: 'agent, metrics only' };

const results = Object.fromEntries(variants.map((variant) => [variant, []]));
let lastReport;
for (let round = 0; round < rounds; round++) {
  const order = variants.map((_, index) => variants[(index + round) % variants.length]);
  const result = await interleavedRound(worker, order, (variant) => [variant, String(warmUp), String(concurrency)], windows, requests);
  for (const variant of variants) results[variant].push(roundFigures(result[variant]));
  lastReport = result.metrics.report;
  process.stderr.write(`round ${round + 1}/${rounds}: ${variants.map((variant) => `${variant} ${results[variant].at(-1).cpu.toFixed(1)}/${results[variant].at(-1).main.toFixed(1)} µs`).join(', ')}\n`);
}

const versus = (variant, key) => {
  if (variant === 'bare') return '–';
  return pairedSummary(results[variant], results.bare, key);
};
const of = (variant, key) => median(results[variant].map((row) => row[key])).toFixed(key === 'rps' ? 0 : 1);

console.log(`agent overhead, interleaved: ${rounds} rounds × ${windows} windows × ${requests} tools/call per variant (after ${warmUp} to warm up), ${concurrency} in flight, in-memory wire, client in the same process, Node ${process.version}`);
console.log('');
console.log('| variant | req/s | vs uninstrumented (paired median; quartiles; 95 % interval of the median) | CPU µs/request | vs uninstrumented | main thread µs | vs uninstrumented |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const variant of variants) {
  console.log(`| ${labels[variant]} | ${of(variant, 'rps')} | ${versus(variant, 'rps')} | ${of(variant, 'cpu')} | ${versus(variant, 'cpu')} | ${of(variant, 'main')} | ${versus(variant, 'main')} |`);
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
console.log('');
console.log(`the metrics-only variant counted ${lastReport.counted} of the ${lastReport.requestsSent} requests its client sent (last round)`);
