// Agent overhead where a stdio MCP server actually runs: in its own process, launched by a client over pipes.
// The same server (agent-stdio-server.mjs) uninstrumented, and under the zero-code entry (`--import
// @extscope/agent/register`, its defaults: wire fallback on, OTLP/HTTP protobuf, metrics every 60 s and at exit, spans
// in batches) with metrics only and with metrics + spans, exporting to a loopback sink in this process that
// answers 200 and counts what arrives.
// A 2026-07-28 v2 client in this process drives tools/call requests. The figure is the server process's own
// CPU time per request, taken between two marks around the timed requests (the client's work is not in it).
// Per round, a fresh server process per variant, all running at once, warmed up, then timed window by window in turn
// (the order rotating), so every variant sees the same stretches of the machine's drift; ratios are paired within
// a round and the median over the rounds is reported.
//   node test/bench/agent-stdio.mjs [rounds=7] [requests per variant and round=20000] [concurrency=16] [windows=10]
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { MetricsRequest } from '../../dist/collector/otlp/proto-root.js';
import { checkExact } from './lib/exactness.mjs';
import { alternated } from './lib/interleaved.mjs';
import { lanes } from './lib/lanes.mjs';
import { median, medianInterval, percent } from './lib/paired-stats.mjs';
import { numericArgs, size } from './lib/smoke.mjs';

const server = fileURLToPath(new URL('./workers/stdio-server.mjs', import.meta.url));
const [rounds, requests, concurrency, windows] = numericArgs(process.argv.slice(2), [
  [7, 1],
  [20_000, 200],
  [16, 16],
  [10, 2],
]);
const warmUp = size(3000, 100);
const variants = ['bare', 'metrics', 'spans'];
const labels = { bare: 'uninstrumented', metrics: 'agent, metrics only', spans: 'agent, metrics + spans' };
const TASKS = 'io.modelcontextprotocol/tasks';

// Where the agent exports: accepts every OTLP request (what a collector would answer), counts them, and keeps each
// server process's latest count of requests (the agent exports running totals, the last one at exit).
const exports = { metrics: 0, traces: 0 };
const requestTotals = new Map();
function readCounts(body) {
  for (const resource of MetricsRequest.toObject(MetricsRequest.decode(body), { longs: Number }).resourceMetrics ?? []) {
    const instance = resource.resource.attributes.find((attribute) => attribute.key === 'service.instance.id').value.stringValue;
    for (const metric of resource.scopeMetrics.flatMap((scope) => scope.metrics)) {
      if (metric.name !== 'extscope.requests') continue;
      if (metric.sum.aggregationTemporality !== 2) throw new Error('the agent exported delta counts: this benchmark reads running totals');
      for (const point of metric.sum.dataPoints) requestTotals.set(`${instance} ${JSON.stringify(point.attributes)}`, Number(point.asInt ?? point.asDouble));
    }
  }
}
const sink = createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const body = request.headers['content-encoding'] === 'gzip' ? gunzipSync(Buffer.concat(chunks)) : Buffer.concat(chunks);
    if (request.url === '/v1/metrics') {
      exports.metrics++;
      readCounts(body);
    }
    if (request.url === '/v1/traces') exports.traces++;
    response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve));
const agentEnv = (spans) => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('OTEL_') && !key.startsWith('EXTSCOPE_')));
  return { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sink.address().port}`, EXTSCOPE_SPANS: String(spans) };
};
const root = fileURLToPath(new URL('../..', import.meta.url));
const launch = {
  bare: { args: [server], cwd: root },
  metrics: { args: ['--import', '@extscope/agent/register', server], env: agentEnv(false), cwd: root },
  spans: { args: ['--import', '@extscope/agent/register', server], env: agentEnv(true), cwd: root },
};

/** One server process of `variant`, connected, warmed up; `window(n)` times n requests in it. */
async function start(variant) {
  const transport = new StdioClientTransport({ command: process.execPath, ...launch[variant], stderr: 'pipe' });
  const client = new Client(
    { name: 'bench-client', version: '1.0.0' },
    { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: 'auto' } },
  );
  await client.connect(transport);
  const marks = createInterface({ input: transport.stderr })[Symbol.asyncIterator]();
  const cpuNow = async () => {
    process.kill(transport.pid, 'SIGUSR2');
    for (;;) {
      const { value, done } = await marks.next();
      if (done) throw new Error('the server closed its stderr');
      if (value.startsWith('{"cpuMicros"')) return JSON.parse(value);
    }
  };
  const { drive, sent } = lanes(concurrency, () => client.callTool({ name: 'echo', arguments: { text: 'hi' } }));
  await drive(warmUp); // JIT, schemas, caches
  return {
    async window(count) {
      const before = await cpuNow();
      const started = process.hrtime.bigint();
      await drive(count);
      const micros = Number(process.hrtime.bigint() - started) / 1000;
      const after = await cpuNow();
      return {
        requests: count,
        micros,
        cpuMicros: after.cpuMicros - before.cpuMicros,
        mainMicros: before.mainMicros === undefined ? Number.NaN : after.mainMicros - before.mainMicros,
      };
    },
    sent,
    close: () => client.close(),
  };
}

const cpu = Object.fromEntries(variants.map((variant) => [variant, []]));
const main = Object.fromEntries(variants.map((variant) => [variant, []]));
const rps = Object.fromEntries(variants.map((variant) => [variant, []]));
let observedRequests = 0;
for (let round = 0; round < rounds; round++) {
  // A fresh server process per variant each round, all running at once; their windows alternate.
  const servers = Object.fromEntries(await Promise.all(variants.map(async (variant) => [variant, await start(variant)])));
  const windowsOf = await alternated(variants, windows, (variant) => servers[variant].window(requests / windows));
  for (const variant of variants) {
    const sum = (key) => windowsOf[variant].reduce((total, window) => total + window[key], 0);
    cpu[variant].push(sum('cpuMicros') / requests);
    main[variant].push(sum('mainMicros') / requests);
    rps[variant].push(requests / (sum('micros') / 1e6));
  }
  for (const variant of variants) {
    await servers[variant].close();
    // The connect's own request, then every tools/call.
    if (variant !== 'bare') observedRequests += servers[variant].sent() + 1;
  }
}
const paired = (series, variant) => series[variant].map((value, round) => value / series.bare[round]);
const versus = (series, variant) => {
  if (variant === 'bare') return '–';
  const ratios = paired(series, variant);
  return `${percent(median(ratios))} (${percent(Math.min(...ratios))}..${percent(Math.max(...ratios))})`;
};
const helpers = Object.fromEntries(variants.map((variant) => [variant, cpu[variant].map((value, round) => value - main[variant][round])]));
console.log(
  `agent overhead in a stdio server process: ${rounds} rounds × ${requests} tools/call requests in ${windows} alternating windows (after ${warmUp} to warm up), ${concurrency} in flight, 2026-07-28 client in another process`,
);
console.log('');
console.log(
  '| variant | server CPU µs/request | vs uninstrumented (paired median, range) | main thread µs | vs uninstrumented | V8 helper threads µs | vs uninstrumented | client-side req/s |',
);
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const variant of variants) {
  console.log(
    `| ${labels[variant]} | ${median(cpu[variant]).toFixed(1)} | ${versus(cpu, variant)} | ${median(main[variant]).toFixed(1)} | ${versus(main, variant)} | ${median(helpers[variant]).toFixed(1)} | ${versus(helpers, variant)} | ${median(rps[variant]).toFixed(0)} |`,
  );
}
const [low, high] = medianInterval(paired(cpu, 'metrics'));
console.log('');
console.log(`metrics only, server CPU vs uninstrumented: 95 % interval of the paired median ${percent(low)}..${percent(high)}`);
console.log(`exports the sink received: ${exports.metrics} of metrics, ${exports.traces} of spans`);
// A server exits once its client closes, after its final export; wait for the last of them to arrive.
for (let waited = 0; waited < 10_000 && [...requestTotals.values()].reduce((sum, value) => sum + value, 0) < observedRequests; waited += 50)
  await new Promise((resolve) => setTimeout(resolve, 50));
sink.close();
checkExact(
  'requests the agents counted (their final exports) of those their clients sent',
  [...requestTotals.values()].reduce((sum, value) => sum + value, 0),
  observedRequests,
);
