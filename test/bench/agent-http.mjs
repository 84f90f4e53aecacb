// The agent's metrics-only overhead on an HTTP server: agent-http-worker.mjs's createMcpHandler server
// uninstrumented and with the agent, each in a process of its own, the order alternating round by round; the
// paired ratios of requests/s and of CPU per request (all threads, main thread) are reported (median, quartiles,
// and a 95 % bootstrap interval of the median).
//   node test/bench/agent-http.mjs [rounds=10] [requests=3000] [concurrency=16]
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { median, pairedSummary } from './paired-stats.mjs';

const run = promisify(execFile);
const worker = fileURLToPath(new URL('./agent-http-worker.mjs', import.meta.url));
const [rounds = 10, requests = 3000, concurrency = 16] = process.argv.slice(2).map(Number);
const variants = ['bare', 'metrics'];

const results = { bare: [], metrics: [] };
for (let round = 0; round < rounds; round++) {
  for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) {
    const { stdout } = await run(process.execPath, ['--expose-gc', worker, variant, String(requests), String(concurrency)], { timeout: 600_000 });
    results[variant].push(JSON.parse(stdout));
  }
}

const versus = (key) => pairedSummary(results.metrics, results.bare, key);
const of = (variant, key) => median(results[variant].map((row) => row[key])).toFixed(key === 'rps' ? 0 : 1);

console.log(`agent overhead on HTTP: ${rounds} rounds × ${requests} tools/call, ${concurrency} in flight, createMcpHandler behind node:http on loopback, client in the same process, Node ${process.version}`);
console.log('');
console.log('| variant | req/s | vs uninstrumented (paired median; quartiles; 95 % interval of the median) | CPU µs/request | vs uninstrumented | main thread µs | vs uninstrumented |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
console.log(`| uninstrumented | ${of('bare', 'rps')} | – | ${of('bare', 'cpuMicrosPerRequest')} | – | ${of('bare', 'mainMicrosPerRequest')} | – |`);
console.log(`| agent, metrics only | ${of('metrics', 'rps')} | ${versus('rps')} | ${of('metrics', 'cpuMicrosPerRequest')} | ${versus('cpuMicrosPerRequest')} | ${of('metrics', 'mainMicrosPerRequest')} | ${versus('mainMicrosPerRequest')} |`);
const last = results.metrics.at(-1);
console.log('');
console.log(`the metrics-only variant counted ${last.counted} of the ${last.requestsSent} requests its client sent (last round)`);
if (last.counted !== last.requestsSent) throw new Error('the count is not exact');
