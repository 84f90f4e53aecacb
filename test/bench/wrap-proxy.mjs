// extscope wrap and extscope proxy against the direct server, side by side in one run:
//   proxy: latency per request (sequential, keep-alive; p50, p99) and throughput (16 concurrent) of JSON
//          tools/call answers, direct to the upstream and through the proxy, in alternating rounds;
//   wrap:  CPU per request of the wrapper process itself, next to the stdio server's own CPU per request,
//          for sequential tools/call requests.
// The proxy and wrap record metrics (OTEL_*_EXPORTER=none: nothing exported, everything counted).
// Usage: node test/bench/wrap-proxy.mjs [rounds=5] [requests per round=1000]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { alternated } from './lib/interleaved.mjs';
import { numericArgs, size } from './lib/smoke.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const [rounds, perRound] = numericArgs(process.argv.slice(2), [
  [5, 1],
  [1000, 50],
]);
const env = { ...process.env, OTEL_METRICS_EXPORTER: 'none', OTEL_TRACES_EXPORTER: 'none' };
const TICKS = 100; // USER_HZ

function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

async function listening(args, stream = 'stdout', pattern = /\{"port":\s*(\d+)\}/) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let text = '';
  for await (const chunk of child[stream]) {
    text += chunk;
    const match = pattern.exec(text);
    if (match) return { child, port: Number(match[1]) };
  }
  throw new Error(`no port from ${args.join(' ')}`);
}

const body = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'auth',
    arguments: {},
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    },
  },
});
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28' };

function post(port) {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers, agent }, (response) => {
      response.resume();
      response.on('end', resolve);
    });
    request.on('error', reject);
    request.end(body);
  });
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];

async function latencies(port, n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const start = process.hrtime.bigint();
    await post(port);
    out.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return out;
}

async function throughput(port, n) {
  let next = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next++ < n) await post(port);
    }),
  );
  return n / (Number(process.hrtime.bigint() - start) / 1e9);
}

const upstream = await listening(['test/fixtures/corpus-http.mjs']);
const proxy = await listening(
  ['dist/bin/extscope.js', 'proxy', '--listen', '127.0.0.1:0', '--upstream', `http://127.0.0.1:${upstream.port}`],
  'stderr',
  /listening on http:\/\/127\.0\.0\.1:(\d+)/,
);
const lat = { direct: [], proxy: [] };
const rps = { direct: [], proxy: [] };
await latencies(upstream.port, size(500, 20));
await latencies(proxy.port, size(500, 20));
for (let round = 0; round < rounds; round++) {
  for (const [name, port] of round % 2 === 0
    ? [
        ['direct', upstream.port],
        ['proxy', proxy.port],
      ]
    : [
        ['proxy', proxy.port],
        ['direct', upstream.port],
      ]) {
    lat[name].push(...(await latencies(port, perRound)));
    rps[name].push(await throughput(port, perRound * 2));
  }
}
proxy.child.kill('SIGTERM');
upstream.child.kill('SIGTERM');
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
console.log('proxy (corpus-http JSON tools/call, loopback):');
for (const name of ['direct', 'proxy']) {
  const sorted = [...lat[name]].sort((a, b) => a - b);
  console.log(
    `  ${name.padEnd(6)} p50 ${quantile(sorted, 0.5).toFixed(3)} ms  p99 ${quantile(sorted, 0.99).toFixed(3)} ms  ${median(rps[name]).toFixed(0)} req/s (16 concurrent, median of ${rounds})`,
  );
}
const added = (q) =>
  quantile(
    [...lat.proxy].sort((a, b) => a - b),
    q,
  ) -
  quantile(
    [...lat.direct].sort((a, b) => a - b),
    q,
  );
console.log(`  added: p50 +${added(0.5).toFixed(3)} ms, p99 +${added(0.99).toFixed(3)} ms; throughput ×${(median(rps.proxy) / median(rps.direct)).toFixed(2)}`);

// wrap: sequential tools/call over stdio, the wrapper's CPU next to the server's.
async function stdioRun(wrapped, n) {
  const args = wrapped ? ['dist/bin/extscope.js', 'wrap', '--', process.execPath, 'test/fixtures/v2-stdio.mjs'] : ['test/fixtures/v2-stdio.mjs'];
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'inherit'] });
  let pending = '';
  let waiting;
  child.stdout.on('data', (chunk) => {
    pending += chunk;
    let newline;
    while ((newline = pending.indexOf('\n')) >= 0) {
      pending = pending.slice(newline + 1);
      waiting?.();
    }
  });
  const ask = (message) =>
    new Promise((resolve) => {
      waiting = resolve;
      child.stdin.write(`${JSON.stringify(message)}\n`);
    });
  const meta = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
    'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  };
  await ask({ jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: meta } });
  for (let i = 0; i < size(200, 20); i++)
    await ask({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { text: 'warm' }, _meta: meta } });
  const server = wrapped ? Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(' ')[0]) : child.pid;
  const before = { wrapper: wrapped ? cpuSeconds(child.pid) : 0, server: cpuSeconds(server) };
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++)
    await ask({ jsonrpc: '2.0', id: 1000 + i, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' }, _meta: meta } });
  const wall = Number(process.hrtime.bigint() - start) / 1e9;
  const after = { wrapper: wrapped ? cpuSeconds(child.pid) : 0, server: cpuSeconds(server) };
  child.stdin.end();
  await once(child, 'exit');
  return { wrapperUs: ((after.wrapper - before.wrapper) / n) * 1e6, serverUs: ((after.server - before.server) / n) * 1e6, rps: n / wall };
}
const stdio = await alternated(['direct', 'wrap'], rounds, (variant) => stdioRun(variant === 'wrap', perRound * 2));
const med = (list, key) => median(list.map((entry) => entry[key]));
console.log('wrap (v2-stdio.mjs, sequential echo calls):');
console.log(`  direct  server ${med(stdio.direct, 'serverUs').toFixed(1)} µs CPU/request, ${med(stdio.direct, 'rps').toFixed(0)} req/s`);
console.log(
  `  wrap    server ${med(stdio.wrap, 'serverUs').toFixed(1)} µs CPU/request, wrapper ${med(stdio.wrap, 'wrapperUs').toFixed(1)} µs CPU/request, ${med(stdio.wrap, 'rps').toFixed(0)} req/s`,
);
console.log(`  (CPU from /proc at ${TICKS} ticks/s: medians of ${rounds} rounds of ${perRound * 2} requests)`);
