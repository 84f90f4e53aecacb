// extscope against what a user would otherwise reach for, side by side in one run, on the same v2 server
// (workers/inmemory-server.mjs): uninstrumented; extscope with metrics only; extscope with spans; Sentry's MCP
// server instrumentation (@sentry/node, wrapMcpServerWithSentry, every transaction sampled); and a plain
// OpenTelemetry span-per-request wrapper. Every variant keeps what it exports in its own process (a count and a few
// samples) and answers its SDK at once, so none pays for a network the others do not. Each variant runs in a warm process of
// its own, window by window in turn (interleaved.mjs), so whatever the machine's speed does over minutes every
// variant sees the same stretches of it; per round (fresh processes each), each variant's figures against the
// uninstrumented one's; over the rounds, the median, quartiles and a 95 % bootstrap interval of the median.
//   node test/bench/compare-sentry.mjs [rounds=8] [windows=10] [requests per window=1000] [concurrency=16]
import { execFile } from 'node:child_process';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { interleavedRound, roundFigures } from './lib/interleaved.mjs';
import { checkExact } from './lib/exactness.mjs';
import { median, pairedSummary } from './lib/paired-stats.mjs';
import { numericArgs, size } from './lib/smoke.mjs';

const run = promisify(execFile);
const worker = fileURLToPath(new URL('./workers/inmemory-server.mjs', import.meta.url));
const [rounds, windows, requests, concurrency] = numericArgs(process.argv.slice(2), [
  [8, 1],
  [10, 2],
  [1000, 100],
  [16, 16],
]);
const warmUp = size(5000, 200);
const variants = ['bare', 'metrics', 'spans', 'sentry', 'wrapper'];
const labels = {
  bare: 'uninstrumented',
  metrics: 'extscope, metrics only',
  spans: 'extscope, metrics + spans',
  sentry: 'Sentry wrapMcpServerWithSentry',
  wrapper: 'OTel span-per-request wrapper',
};
const TASKS = 'io.modelcontextprotocol/tasks';

/** One run of `count` requests in a process of its own (no coordinator): for the sampled-traces check. */
async function once(variant, count, sampleRate) {
  const args = ['--expose-gc', worker, variant, String(count), String(concurrency), String(sampleRate)];
  const { stdout } = await run(process.execPath, args, { maxBuffer: 16 * 2 ** 20, timeout: 600_000 });
  return JSON.parse(stdout);
}

const loadBefore = loadavg();
const results = Object.fromEntries(variants.map((variant) => [variant, []]));
const reports = Object.fromEntries(variants.map((variant) => [variant, []]));
for (let round = 0; round < rounds; round++) {
  // Rotate the order, so no variant always starts a window sequence.
  const order = variants.map((_, index) => variants[(index + round) % variants.length]);
  const result = await interleavedRound(worker, order, (variant) => [variant, String(warmUp), String(concurrency), '1'], windows, requests);
  for (const variant of variants) {
    results[variant].push(roundFigures(result[variant]));
    reports[variant].push(result[variant].report);
  }
  process.stderr.write(`round ${round + 1}/${rounds}: ${variants.map((variant) => `${variant} ${results[variant].at(-1).cpu.toFixed(1)} µs`).join(', ')}\n`);
}
// Once more with 10 % of traces sampled, as production setups often do: what do the counts become?
const SAMPLED = 0.1;
const sampled = {};
for (const variant of ['spans', 'sentry', 'wrapper']) sampled[variant] = await once(variant, size(5000, 500), SAMPLED);
const loadAfter = loadavg();

const of = (variant, key) => median(results[variant].map((row) => row[key])).toFixed(key === 'rps' ? 0 : 1);
const memory = (variant, key) => median(reports[variant].map((report) => report[key])).toFixed(key === 'heapUsedMB' ? 1 : 0);
const versus = (variant, key, base = 'bare') => (variant === base ? '–' : pairedSummary(results[variant], results[base], key));

console.log(
  `compare, interleaved: ${rounds} rounds × ${windows} windows × ${requests} tools/call per variant (after ${warmUp} to warm up), ${concurrency} in flight, in-memory wire, 2026-07-28 client, Node ${process.version}`,
);
console.log(`load average (1 min) before ${loadBefore[0].toFixed(2)}, after ${loadAfter[0].toFixed(2)} on a shared 2-core machine`);
console.log('');
console.log(
  '| variant | req/s | vs uninstrumented (paired median; quartiles; 95 % interval of the median) | CPU µs/request | vs uninstrumented | main thread µs | vs uninstrumented | heap after GC MiB | RSS MiB |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const variant of variants) {
  console.log(
    `| ${labels[variant]} | ${of(variant, 'rps')} | ${versus(variant, 'rps')} | ${of(variant, 'cpu')} | ${versus(variant, 'cpu')} | ${of(variant, 'main')} | ${versus(variant, 'main')} | ${memory(variant, 'heapUsedMB')} | ${memory(variant, 'rssMB')} |`,
  );
}
console.log('');
console.log(`extscope with spans vs Sentry: req/s ${versus('spans', 'rps', 'sentry')}, CPU per request ${versus('spans', 'cpu', 'sentry')}`);
console.log(
  `extscope with spans vs the span-per-request wrapper: req/s ${versus('spans', 'rps', 'wrapper')}, CPU per request ${versus('spans', 'cpu', 'wrapper')}`,
);

// What each one recorded, from what it exported in the last round.
const last = Object.fromEntries(variants.map((variant) => [variant, reports[variant].at(-1)]));
const holds = (sample, text) => JSON.stringify(sample ?? {}).includes(text);
const records = {
  metrics: { sample: last.metrics.metricSample, count: last.metrics.counted },
  spans: { sample: [last.spans.metricSample, last.spans.spanSample], count: last.spans.counted },
  sentry: { sample: last.sentry.spanSample, count: last.sentry.spansExported },
  wrapper: { sample: last.wrapper.spanSample, count: last.wrapper.spansExported },
};
console.log('');
console.log("What each recorded (last round, every request its client sent: the connect's discover probe, the warm-up and the windows):");
console.log('');
const recordedSampled = {
  metrics: undefined,
  spans: `${sampled.spans.counted} of ${sampled.spans.requestsSent} counted (${sampled.spans.spansExported} spans)`,
  // Sentry samples a trace, not a request, and every request of one connection is in one trace: all or none.
  sentry: `${sampled.sentry.spansExported} of ${sampled.sentry.requestsSent} (spans in ${sampled.sentry.traces} trace${sampled.sentry.traces === 1 ? '' : 's'})`,
  wrapper: `${sampled.wrapper.spansExported} of ${sampled.wrapper.requestsSent}`,
};
console.log(
  `| variant | extension ids | declaration state | negotiated ids | requests recorded (every trace sampled) | with ${SAMPLED * 100} % of traces sampled |`,
);
console.log('| --- | --- | --- | --- | ---: | ---: |');
for (const variant of ['metrics', 'spans', 'sentry', 'wrapper']) {
  const { sample, count } = records[variant];
  const yes = (value) => (value ? 'yes' : 'no');
  console.log(
    `| ${labels[variant]} | ${yes(holds(sample, TASKS))} | ${yes(holds(sample, 'extscope.client.declaration'))} | ${yes(holds(sample, 'extscope.extension.negotiated'))} | ${count} of ${last[variant].requestsSent} | ${recordedSampled[variant] ?? 'no spans: counts only, exact'} |`,
  );
}
console.log('');
console.log(
  `Sentry's spans, every trace sampled: ${last.sentry.spansExported} in ${last.sentry.traces} trace${last.sentry.traces === 1 ? '' : 's'} (its sampling keeps or drops a trace whole: with ${SAMPLED * 100} %, all of this connection's requests or none)`,
);
console.log(`A Sentry span as recorded: ${JSON.stringify(last.sentry.spanSample?.[0])}`);
console.log(`An extscope extension point: ${JSON.stringify(last.metrics.metricSample?.[0])}`);
console.log(`A wrapper span: ${JSON.stringify(last.wrapper.spanSample?.[0])}`);

// Every request counted: extscope's counts always, and every span while every trace is sampled.
for (const variant of ['metrics', 'spans', 'sentry', 'wrapper'])
  checkExact(`${labels[variant]}: requests recorded of those sent (last round)`, records[variant].count, last[variant].requestsSent);
checkExact('extscope with 10 % of traces sampled: requests counted of those sent', sampled.spans.counted, sampled.spans.requestsSent);
