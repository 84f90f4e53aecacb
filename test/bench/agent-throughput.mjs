// Agent overhead, side by side in one run: the same McpServer uninstrumented, with the agent (metrics only),
// with the agent (metrics + spans), and with a hand-written span-per-request wrapper. Variants run in separate
// processes (patching is process-wide), interleaved round by round, the order rotating. This VM's speed drifts by
// ±10% between processes, so ratios are computed within each round (paired) and the median ratio is reported.
//   node test/bench/agent-throughput.mjs [rounds=5] [requests=20000] [concurrency=16]
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const worker = fileURLToPath(new URL('./agent-worker.mjs', import.meta.url));
const [rounds = 5, requests = 20_000, concurrency = 16] = process.argv.slice(2).map(Number);
const variants = ['bare', 'otel', 'metrics', 'wire', 'spans', 'wrapper'];
const run = (args) => JSON.parse(execFileSync(process.execPath, ['--expose-gc', worker, ...args.map(String)], { encoding: 'utf8' }));

const samples = Object.fromEntries(variants.map((variant) => [variant, []]));
const cpu = Object.fromEntries(variants.map((variant) => [variant, []]));
for (let round = 0; round < rounds; round++) {
  // The order rotates, so that no variant always runs first or last in a round (the machine drifts within one).
  for (const variant of variants.map((_, index) => variants[(index + round) % variants.length])) {
    const result = run([variant, requests, concurrency]);
    samples[variant].push(result.rps);
    cpu[variant].push(result.cpuMicrosPerRequest);
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const pairedRatio = (variant, base) => median(samples[variant].map((value, round) => value / samples[base][round]));
console.log(`agent throughput: ${rounds} rounds × ${requests} tools/call requests, ${concurrency} in flight, in-memory wire, 2026-07-28 client`);
console.log('variant                         median req/s   vs bare (paired median)   min..max         CPU µs/request   CPU vs bare (paired median)');
const labels = { bare: 'uninstrumented', otel: 'OpenTelemetry SDK, no agent', metrics: 'agent, metrics only', wire: 'agent, metrics, wire fallback', spans: 'agent, metrics + spans', wrapper: 'plain span-per-request wrapper' };
for (const variant of variants) {
  const values = samples[variant];
  const range = `${Math.min(...values).toFixed(0)}..${Math.max(...values).toFixed(0)}`;
  const cpuRatio = median(cpu[variant].map((value, round) => value / cpu.bare[round]));
  console.log(`${labels[variant].padEnd(30)} ${median(values).toFixed(0).padStart(10)}   ${(pairedRatio(variant, 'bare') * 100).toFixed(1).padStart(21)}%   ${range.padEnd(16)} ${median(cpu[variant]).toFixed(1).padStart(6)}   ${((cpuRatio - 1) * 100).toFixed(1).padStart(6)}%`);
}
console.log(`agent with spans vs plain wrapper (paired median): ${(pairedRatio('spans', 'wrapper') * 100).toFixed(1)}%`);

const junk = { requests: 100_000, ids: 10_000 };
const bareMemory = run(['bare', junk.requests, concurrency, junk.ids]);
const agentMemory = run(['spans', junk.requests, concurrency, junk.ids]);
console.log(`\nmemory after ${junk.requests} requests carrying ${junk.ids} distinct junk extension ids (heap after GC):`);
console.log(`  uninstrumented:         ${bareMemory.heapUsedMB.toFixed(1)} MiB`);
console.log(`  agent (metrics + spans): ${agentMemory.heapUsedMB.toFixed(1)} MiB (+${(agentMemory.heapUsedMB - bareMemory.heapUsedMB).toFixed(1)} MiB); metric streams: ${agentMemory.streams.requests} request, ${agentMemory.streams.extensions} extension (cap 10000); requests counted: ${agentMemory.counted}`);
