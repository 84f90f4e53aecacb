// What the agent's metrics-only overhead is made of, on compare-sentry-worker.mjs's server (client in the same
// process): the uninstrumented server; `loaded`, the same with everything the metrics-only variant loads and builds
// (the OpenTelemetry metrics SDK, extscope, the instrumentation constructed but disabled: nothing patched); and
// `metrics`, the agent at work. Each variant runs in a process of its own, the order rotating round by round;
// the paired ratios of requests/s (the median window's), of all threads' and of the main thread's CPU per request
// are reported (median, quartiles, and a 95 % bootstrap interval for the median).
//   node test/bench/agent-loading.mjs [rounds=30] [requests=20000] [concurrency=16]
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { median, pairedSummary } from './paired-stats.mjs';

const run = promisify(execFile);
const worker = fileURLToPath(new URL('./compare-sentry-worker.mjs', import.meta.url));
const [rounds = 30, requests = 20_000, concurrency = 16] = process.argv.slice(2).map(Number);
const variants = ['bare', 'loaded', 'metrics'];
const labels = { bare: 'uninstrumented', loaded: 'agent and OpenTelemetry SDK loaded, not enabled', metrics: 'agent, metrics only' };

const results = Object.fromEntries(variants.map((variant) => [variant, []]));
for (let round = 0; round < rounds; round++) {
  for (const variant of variants.map((_, index) => variants[(index + round) % variants.length])) {
    const { stdout } = await run(process.execPath, ['--expose-gc', worker, variant, String(requests), String(concurrency)], { timeout: 600_000 });
    results[variant].push(JSON.parse(stdout));
  }
}

const versus = (variant, key) => {
  if (variant === 'bare') return '–';
  return pairedSummary(results[variant], results.bare, key);
};
const helpers = (result) => result.cpuMicrosPerRequest - result.mainMicrosPerRequest;
for (const variant of variants) for (const result of results[variant]) result.helperMicrosPerRequest = helpers(result);

console.log(`agent overhead, what it is made of: ${rounds} rounds × ${requests} tools/call, ${concurrency} in flight, in-memory wire, client in the same process, Node ${process.version}`);
console.log('');
console.log('| variant | req/s | vs uninstrumented (paired median; quartiles; 95 % interval of the median) | CPU µs/request | vs uninstrumented | main thread µs | vs uninstrumented | V8 helper threads µs | vs uninstrumented | heap after GC MiB |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const variant of variants) {
  const rows = results[variant];
  const of = (key) => median(rows.map((row) => row[key])).toFixed(1);
  console.log(`| ${labels[variant]} | ${median(rows.map((row) => row.rps)).toFixed(0)} | ${versus(variant, 'rps')} | ${of('cpuMicrosPerRequest')} | ${versus(variant, 'cpuMicrosPerRequest')} | ${of('mainMicrosPerRequest')} | ${versus(variant, 'mainMicrosPerRequest')} | ${of('helperMicrosPerRequest')} | ${versus(variant, 'helperMicrosPerRequest')} | ${of('heapUsedMB')} |`);
}
const last = results.metrics.at(-1);
console.log('');
console.log(`the metrics-only variant counted ${last.counted} of the ${last.requestsSent} requests its client sent (last round)`);
