// Query latency: GET /api/v1/matrix over 7 days of minute rollups for 500 instances × 50 client versions ×
// 20 extensions, through a real collector (child process) over HTTP: median and p95, next to other queries.
//
//   npm run build && node test/bench/collector-matrix.mjs
//   env: BENCH_STRIDE (5: each instance reports one of its client versions every 5 minutes), BENCH_RUNS (50),
//   BENCH_CLIENTS_PER_SERVICE (10 of the 50 client versions use each service; 50 = every cell populated)
//
// The seven days are loaded through the store's own write path below the HTTP layer: increments are written to
// `point_log` as an export would, and folded into the rollups by the collector's Folder (a day at a time).

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fleet } from './lib/fleet.mjs';
import { loadRollups } from './lib/rollup-loader.mjs';
import { startCollectorChild } from './lib/collector-child.mjs';

const STRIDE = Number(process.env.BENCH_STRIDE ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 50);
const CLIENTS_PER_SERVICE = Number(process.env.BENCH_CLIENTS_PER_SERVICE ?? 10);
const DAYS = 7;

async function load(dbPath) {
  const { instances, clients } = fleet({ clientsPerService: CLIENTS_PER_SERVICE });
  const loaded = await loadRollups(dbPath, { instances, days: DAYS, stride: STRIDE, seed: 1, errorRate: 0.3 });
  return { ...loaded, clients: clients.length };
}

function get(agent, url) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    request(url, { agent }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => resolve({ ms: performance.now() - started, status: res.statusCode, body: Buffer.concat(chunks) }));
    })
      .on('error', reject)
      .end();
  });
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

const dir = mkdtempSync(join(tmpdir(), 'extscope-bench-matrix-'));
const dbPath = join(dir, 'matrix.db');
try {
  let started = performance.now();
  const loaded = await load(dbPath);
  const size = statSync(dbPath).size;
  console.log(
    `matrix: ${loaded.instances} instances (20 services × 25), ${loaded.clients} client versions, 20 extension ids, ${DAYS} days; ` +
      `${CLIENTS_PER_SERVICE} client versions per service, each instance reports one of them every ${STRIDE} minutes → ${loaded.points.toLocaleString('en')} points, ${loaded.requests.toLocaleString('en')} requests`,
  );
  console.log(`        rows: ${Object.entries(loaded.counts).map(([table, count]) => `${table} ${count.toLocaleString('en')}`).join(', ')}; database ${(size / 1e6).toFixed(0)} MB; loaded in ${((performance.now() - started) / 1000).toFixed(0)} s`);

  const { child, url } = await startCollectorChild(dbPath);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    // Let the start-up retention pass finish (it walks every series once).
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const instance = fleet({ clientsPerService: CLIENTS_PER_SERVICE }).instances[7].instanceId;
    const queries = [
      ['matrix 7 d, by client (the target)', '/api/v1/matrix?from=-7d'],
      ['matrix 7 d, by client@version', '/api/v1/matrix?from=-7d&group=client_version'],
      ['matrix 7 d, one service', '/api/v1/matrix?from=-7d&service=service-3'],
      ['matrix 7 d, one instance', `/api/v1/matrix?from=-7d&instance=${instance}`],
      ['matrix 24 h (minute resolution)', '/api/v1/matrix?from=-24h&group=client_version'],
      ['matrix 1 h', '/api/v1/matrix?from=-1h'],
      ['matrix 7 d as CSV', '/api/v1/matrix?from=-7d&group=client_version&format=csv'],
      ['timeseries 7 d, 1 h step', '/api/v1/timeseries?extension=io.modelcontextprotocol/tasks&from=-7d&step=1h'],
      ['instances', '/api/v1/instances'],
    ];
    let check;
    for (const [name, path] of queries) {
      for (let i = 0; i < 5; i++) await get(agent, `${url}${path}`);
      const times = [];
      let last;
      for (let i = 0; i < RUNS; i++) {
        last = await get(agent, `${url}${path}`);
        if (last.status !== 200) throw new Error(`${path}: HTTP ${last.status} ${last.body}`);
        times.push(last.ms);
      }
      times.sort((a, b) => a - b);
      console.log(`${name.padEnd(38)} median ${percentile(times, 50).toFixed(1).padStart(6)} ms   p95 ${percentile(times, 95).toFixed(1).padStart(6)} ms   (${(last.body.length / 1024).toFixed(0)} KiB)`);
      if (check === undefined) check = JSON.parse(last.body.toString());
    }
    const total = check.rows.reduce((sum, row) => sum + row.requests, 0);
    console.log(`exactness: requests loaded ${loaded.requests.toLocaleString('en')}, in the 7-day matrix ${total.toLocaleString('en')}: ${total === loaded.requests ? 'exact' : 'MISMATCH'}`);
  } finally {
    agent.destroy();
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
