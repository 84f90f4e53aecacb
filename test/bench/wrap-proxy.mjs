// extscope wrap and extscope proxy against the direct server and the proxies beside them, in one run:
//   proxy: CPU per request of each proxy process (all its threads, from /proc schedstat: nanoseconds), latency per
//          request (sequential, keep-alive; p50, p99) and throughput (16 concurrent) of JSON tools/call answers,
//          direct to the upstream, through `extscope proxy`, through a bare node:http proxy (bodies piped, nothing
//          read: the floor a Node.js HTTP proxy sits on), through a bare Node.js TCP relay (bytes piped, no HTTP: the
//          floor of any proxy written in Node.js) and through nginx, the order rotating round by round; once in
//          front of a trivial upstream (corpus-http.mjs: fixed answers, no SDK) and once in front of a real MCP
//          server (the v2 SDK's createMcpHandler behind node:http, v2-http.mjs);
//   wrap:  CPU per request of the wrapper process itself, next to the stdio server's own CPU per request,
//          for sequential tools/call requests.
// The proxy and wrap record metrics (OTEL_*_EXPORTER=none: nothing exported, everything counted).
// Usage: node test/bench/wrap-proxy.mjs [rounds=5] [requests per round=1000]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, readdirSync } from 'node:fs';
import http from 'node:http';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { alternated } from './lib/interleaved.mjs';
import { startNginxProxy } from './lib/nginx-proxy.mjs';
import { numericArgs, size } from './lib/smoke.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const [rounds, perRound] = numericArgs(process.argv.slice(2), [
  [5, 1],
  [1000, 50],
]);
const env = { ...process.env, OTEL_METRICS_EXPORTER: 'none', OTEL_TRACES_EXPORTER: 'none' };
const TICKS = 100; // USER_HZ
const load = () =>
  loadavg()
    .map((value) => value.toFixed(1))
    .join(' ');

function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

/** CPU time of a process so far, every thread, in microseconds (schedstat counts nanoseconds, not 10 ms ticks). */
function cpuMicros(pid) {
  let nanos = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      nanos += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return nanos / 1000;
}

/** What this run started and has not stopped yet: stopped when it exits, a failed run included. */
const running = new Set();
process.on('exit', () => {
  for (const started of running) started.stop();
});
function tracked(started) {
  const { stop } = started;
  running.add(started);
  started.stop = () => {
    running.delete(started);
    stop();
  };
  return started;
}

async function listening(args, stream = 'stdout', pattern = /\{"port":\s*(\d+)\}/) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const started = tracked({ child, port: 0, stop: () => child.kill('SIGTERM') });
  let text = '';
  for await (const chunk of child[stream]) {
    text += chunk;
    const match = pattern.exec(text);
    if (match) return Object.assign(started, { port: Number(match[1]) });
  }
  throw new Error(`no port from ${args.join(' ')}`);
}

const body = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: {
    name: 'echo',
    arguments: { text: 'hi' },
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
      'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
    },
  },
});
// Idle kept-alive connections are dropped after 4 s, as undici drops its own: a Node.js server announces 5 s
// (`Keep-Alive: timeout=5`) and closes an idle connection about 6 s after its last answer, and a request sent on it
// just then is reset (direct, through the bare proxies; `extscope proxy` sends it again on a fresh connection).
// Without a timeout, Node.js's agent keeps idle connections with no limit.
const agent = new http.Agent({ keepAlive: true, maxSockets: 16, timeout: 4000 });
const headers = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': 'tools/call',
  'mcp-name': 'echo',
};

function post(port) {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers, agent }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`HTTP ${response.statusCode} from port ${port}`));
      response.resume();
      response.on('end', resolve);
    });
    request.on('error', reject);
    request.end(body);
  });
}

const signed = (value, digits) => `${value >= 0 ? '+' : ''}${value.toFixed(digits)}`;
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

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

const PROXIES = ['extscope', 'node', 'tcp', 'nginx'];

/** Every proxy in front of one upstream, measured with it directly in rotating order. */
async function proxyRun(label, upstreamScript) {
  const upstream = await listening([upstreamScript]);
  const proxies = {
    extscope: await listening(
      ['dist/bin/extscope.js', 'proxy', '--listen', '127.0.0.1:0', '--upstream', `http://127.0.0.1:${upstream.port}`],
      'stderr',
      /listening on http:\/\/127\.0\.0\.1:(\d+)/,
    ),
    node: await listening(['test/bench/lib/bare-proxy.mjs', String(upstream.port)]),
    tcp: await listening(['test/bench/lib/bare-tcp-relay.mjs', String(upstream.port)]),
    nginx: tracked(await startNginxProxy(upstream.port)),
  };
  const ports = { direct: upstream.port, ...Object.fromEntries(PROXIES.map((name) => [name, proxies[name].port])) };
  const variants = ['direct', ...PROXIES];
  for (const name of variants) await latencies(ports[name], size(500, 20));
  const figures = Object.fromEntries(variants.map((name) => [name, { lat: [], rps: [], seqCpu: [], concCpu: [] }]));
  const loads = [load()];
  await alternated(variants, rounds, async (name) => {
    const pid = proxies[name]?.child.pid;
    const cpu = () => (pid === undefined ? 0 : cpuMicros(pid));
    let before = cpu();
    figures[name].lat.push(...(await latencies(ports[name], perRound)));
    figures[name].seqCpu.push((cpu() - before) / perRound);
    before = cpu();
    figures[name].rps.push(await throughput(ports[name], perRound * 2));
    figures[name].concCpu.push((cpu() - before) / (perRound * 2));
  });
  loads.push(load());
  for (const proxy of Object.values(proxies)) proxy.stop();
  upstream.stop();
  const sorted = Object.fromEntries(variants.map((name) => [name, [...figures[name].lat].sort((a, b) => a - b)]));
  console.log(`proxy, ${label} (JSON tools/call, loopback; load average ${loads[0]} → ${loads[1]}):`);
  for (const name of variants) {
    const { rps, seqCpu, concCpu } = figures[name];
    const cpu =
      name === 'direct' ? ''.padEnd(42) : `CPU ${median(seqCpu).toFixed(1).padStart(6)} µs/request (16 conc. ${median(concCpu).toFixed(1).padStart(6)})`;
    const p50 = quantile(sorted[name], 0.5);
    const p99 = quantile(sorted[name], 0.99);
    const added = name === 'direct' ? '' : ` (${signed(p50 - quantile(sorted.direct, 0.5), 3)} / ${signed(p99 - quantile(sorted.direct, 0.99), 3)})`;
    console.log(
      `  ${name.padEnd(8)} ${cpu}  p50 / p99 ${p50.toFixed(3)} / ${p99.toFixed(3)} ms${added.padEnd(20)}  ${median(rps).toFixed(0)} req/s (×${(median(rps) / median(figures.direct.rps)).toFixed(2)})`,
    );
  }
  // The goals: CPU per request within 15 µs of the bare node:http proxy's, and at most 0.1 ms added to the p50.
  const extra = median(figures.extscope.seqCpu) - median(figures.node.seqCpu);
  const extraConcurrent = median(figures.extscope.concCpu) - median(figures.node.concCpu);
  const addedP50 = quantile(sorted.extscope, 0.5) - quantile(sorted.direct, 0.5);
  console.log(
    `  extscope over the bare node proxy: ${signed(extra, 1)} µs CPU/request sequential (${signed(extraConcurrent, 1)} at 16 concurrent; goal ≤ +15: ${extra <= 15 ? 'met' : 'NOT met'}); ` +
      `CPU ×${(median(figures.extscope.seqCpu) / median(figures.node.seqCpu)).toFixed(2)} the bare proxy's, ×${(median(figures.extscope.seqCpu) / median(figures.nginx.seqCpu)).toFixed(2)} nginx's`,
  );
  // Beside it, what the bare node:http proxy, the bare TCP relay and nginx add: the floors a Node.js proxy sits on here.
  const added = (name) => signed(quantile(sorted[name], 0.5) - quantile(sorted.direct, 0.5), 3);
  console.log(
    `  extscope added p50 over direct: ${signed(addedP50, 3)} ms (goal ≤ +0.100: ${addedP50 <= 0.1 ? 'met' : 'NOT met'}); the bare node proxy adds ${added('node')} ms, the bare TCP relay ${added('tcp')} ms, nginx ${added('nginx')} ms`,
  );
}

await proxyRun('trivial upstream (corpus-http.mjs)', 'test/fixtures/corpus-http.mjs');
await proxyRun('MCP SDK upstream (v2-http.mjs)', 'test/fixtures/v2-http.mjs');
console.log(`  (CPU and latency: medians of ${rounds} rounds of ${perRound} sequential requests, then ${perRound * 2} at 16 concurrent)`);

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
