// Agent overhead where a stdio MCP server actually runs: in its own process, launched by a client over pipes.
// The same server (agent-stdio-server.mjs) uninstrumented, and under the zero-code entry (`--import
// extscope/register`, its defaults: wire fallback on, OTLP/HTTP protobuf, metrics every 60 s and at exit, spans
// in batches) with metrics only and with metrics + spans, exporting to a loopback sink in this process that
// answers 200 and counts what arrives.
// A 2026-07-28 v2 client in this process drives tools/call requests. The figure is the server process's own
// CPU time per request, taken between two marks around the timed requests (the client's work is not in it).
// Variants run in separate processes, interleaved round by round; ratios are paired within a round and the
// median is reported, because this machine's speed drifts between processes.
//   node test/bench/agent-stdio.mjs [rounds=7] [requests=20000] [concurrency=16]
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { median, medianInterval, percent } from './lib/paired-stats.mjs';

const server = fileURLToPath(new URL('./workers/stdio-server.mjs', import.meta.url));
const [rounds = 7, requests = 20_000, concurrency = 16] = process.argv.slice(2).map(Number);
const variants = ['bare', 'metrics', 'spans'];
const labels = { bare: 'uninstrumented', metrics: 'agent, metrics only', spans: 'agent, metrics + spans' };
const TASKS = 'io.modelcontextprotocol/tasks';

// Where the agent exports: accepts every OTLP request (what a collector would answer) and counts them.
const exports = { metrics: 0, traces: 0 };
const sink = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    if (request.url === '/v1/metrics') exports.metrics++;
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
  metrics: { args: ['--import', 'extscope/register', server], env: agentEnv(false), cwd: root },
  spans: { args: ['--import', 'extscope/register', server], env: agentEnv(true), cwd: root },
};

async function measure(variant) {
  const transport = new StdioClientTransport({ command: process.execPath, ...launch[variant], stderr: 'pipe' });
  const client = new Client({ name: 'bench-client', version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: 'auto' } });
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
  let sent = 0;
  const drive = async (total) => {
    const target = sent + total;
    await Promise.all(Array.from({ length: concurrency }, async () => {
      while (sent < target) {
        sent++;
        await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
      }
    }));
  };
  await drive(Math.min(3000, requests)); // warm-up: JIT, schemas, caches
  const before = await cpuNow();
  const started = process.hrtime.bigint();
  await drive(requests);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const after = await cpuNow();
  await client.close();
  const mainMicros = before.mainMicros === undefined ? Number.NaN : after.mainMicros - before.mainMicros;
  return { rps: requests / seconds, cpuMicrosPerRequest: (after.cpuMicros - before.cpuMicros) / requests, mainMicrosPerRequest: mainMicros / requests };
}

const cpu = Object.fromEntries(variants.map((variant) => [variant, []]));
const main = Object.fromEntries(variants.map((variant) => [variant, []]));
const rps = Object.fromEntries(variants.map((variant) => [variant, []]));
for (let round = 0; round < rounds; round++) {
  // The order rotates, so no variant always runs first or last in a round.
  for (const variant of variants.map((_, index) => variants[(index + round) % variants.length])) {
    const result = await measure(variant);
    cpu[variant].push(result.cpuMicrosPerRequest);
    main[variant].push(result.mainMicrosPerRequest);
    rps[variant].push(result.rps);
  }
}
const paired = (series, variant) => series[variant].map((value, round) => value / series.bare[round]);
const versus = (series, variant) => {
  if (variant === 'bare') return '–';
  const ratios = paired(series, variant);
  return `${percent(median(ratios))} (${percent(Math.min(...ratios))}..${percent(Math.max(...ratios))})`;
};
const helpers = Object.fromEntries(variants.map((variant) => [variant, cpu[variant].map((value, round) => value - main[variant][round])]));
console.log(`agent overhead in a stdio server process: ${rounds} rounds × ${requests} tools/call requests, ${concurrency} in flight, 2026-07-28 client in another process`);
console.log('');
console.log('| variant | server CPU µs/request | vs uninstrumented (paired median, range) | main thread µs | vs uninstrumented | V8 helper threads µs | vs uninstrumented | client-side req/s |');
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
sink.close();
