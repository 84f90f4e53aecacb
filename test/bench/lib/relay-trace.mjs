// Where a relay spends a request's time, `extscope proxy` beside the bare Node.js TCP relay (bare-tcp-relay.mjs),
// both in front of one upstream: each runs with socket-timestamps.cjs preloaded, sequential keep-alive tools/call
// requests go to each in turn (blocks of 100, the order alternating), and for every request that crossed a relay
// as one chunk each way the stages are printed (medians and quartiles, µs): from the client's bytes arriving to the
// write upstream starting, that write (the system call), the rest of the listener; the upstream's time; from the
// answer arriving to the write to the client, that write, the rest; and the sum of what the request waits on in the
// relay (both arrivals to both writes done). Usage: node test/bench/lib/relay-trace.mjs [requests=3000] [upstream
// script=test/fixtures/corpus-http.mjs]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const PRELOAD = fileURLToPath(new URL('socket-timestamps.cjs', import.meta.url));
const requests = Number(process.argv[2] ?? 3000);
const upstreamScript = process.argv[3] ?? 'test/fixtures/corpus-http.mjs';
const dir = mkdtempSync(join(tmpdir(), 'relay-trace-'));
const env = { ...process.env, OTEL_METRICS_EXPORTER: 'none', OTEL_TRACES_EXPORTER: 'none' };
const load = () => loadavg()[0].toFixed(1);

const children = [];
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});
async function listening(args, stream, pattern, extraEnv = {}) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let text = '';
  for await (const chunk of child[stream]) {
    text += chunk;
    const match = pattern.exec(text);
    if (match) return { child, port: Number(match[1]) };
  }
  throw new Error(`no port from ${args.join(' ')}`);
}
const PORT = /\{"port":\s*(\d+)\}/;
const upstream = await listening([upstreamScript], 'stdout', PORT);
const relays = {
  extscope: await listening(
    ['--require', PRELOAD, 'dist/bin/extscope.js', 'proxy', '--listen', '127.0.0.1:0', '--upstream', `http://127.0.0.1:${upstream.port}`],
    'stderr',
    /listening on http:\/\/127\.0\.0\.1:(\d+)/,
    { RELAY_TRACE_FILE: join(dir, 'extscope') },
  ),
  tcp: await listening(['--require', PRELOAD, 'test/bench/lib/bare-tcp-relay.mjs', String(upstream.port)], 'stdout', PORT, {
    RELAY_TRACE_FILE: join(dir, 'tcp'),
  }),
};

const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } });
const agent = new http.Agent({ keepAlive: true, maxSockets: 1, timeout: 4000 });
const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28' };
const post = (port) =>
  new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers, agent }, (response) => {
      response.resume();
      response.on('end', resolve);
    });
    request.on('error', reject);
    request.end(body);
  });

const before = load();
for (let block = 0; block * 100 < requests; block++)
  for (const name of block % 2 === 0 ? ['extscope', 'tcp'] : ['tcp', 'extscope']) for (let i = 0; i < 100; i++) await post(relays[name].port);
const after = load();
await Promise.all(
  Object.values(relays).map(({ child }) => {
    child.kill('SIGTERM');
    return new Promise((resolve) => child.once('exit', resolve));
  }),
);

// One request crossing as one chunk each way: client data in, upstream write start / done, listener returned;
// upstream data in, client write start / done, listener returned (then the next request's data in).
const ONE_CHUNK = '10,31,41,20,11,30,40,21';
const STAGES = [
  ['client bytes in → write upstream starts', (t) => t[1] - t[0]],
  ['the write upstream (system call)', (t) => t[2] - t[1]],
  ['the rest of that listener', (t) => t[3] - t[2]],
  ['the upstream (listener returned → answer in)', (t) => t[4] - t[3]],
  ['answer in → write to the client starts', (t) => t[5] - t[4]],
  ['the write to the client (system call)', (t) => t[6] - t[5]],
  ['the rest of that listener', (t) => t[7] - t[6]],
  ['what the request waits on in the relay', (t) => t[2] - t[0] + (t[6] - t[4])],
];
const quartiles = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return [0.25, 0.5, 0.75].map((q) => sorted[Math.floor(q * sorted.length)].toFixed(1).padStart(6)).join(' ');
};
console.log(`relay trace, ${upstreamScript}, ${requests} sequential requests each (load average ${before} → ${after}); µs, p25 p50 p75:`);
const figures = {};
for (const name of Object.keys(relays)) {
  const rows = readFileSync(join(dir, name), 'utf8')
    .trim()
    .split('\n')
    .map((line) => line.split(' ').map(Number));
  const stages = STAGES.map(() => []);
  for (let i = 0; i + 8 <= rows.length; i++) {
    if (
      rows
        .slice(i, i + 8)
        .map(([event]) => event)
        .join(',') !== ONE_CHUNK
    )
      continue;
    const t = rows.slice(i, i + 8).map(([, time]) => time);
    STAGES.forEach(([, stage], index) => stages[index].push(stage(t)));
  }
  figures[name] = { stages, n: stages[0].length };
}
STAGES.forEach(([label], index) =>
  console.log(
    `  ${label.padEnd(46)} ${Object.keys(relays)
      .map((name) => `${name} ${quartiles(figures[name].stages[index])}`)
      .join('   ')}`,
  ),
);
console.log(
  `  (requests traced as one chunk each way: ${Object.keys(relays)
    .map((name) => `${name} ${figures[name].n}`)
    .join(', ')})`,
);
process.exit(0);
