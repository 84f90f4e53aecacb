// The longest event-loop stall of a collector child while it ingests wide exports (20,000 counted points of
// extscope.requests over 1,000 client names, ~7.8 MB of protobuf, as test/faults/big-export.ts `wideExport`),
// and the /healthz round trips a client sees meanwhile (probing every 10 ms).
//
//   npm run build && node test/bench/ingest-stall.mjs
//   env: BENCH_POINTS (20000), BENCH_EXPORTS (exports sent one after another per run, 1), BENCH_RUNS (3),
//   BENCH_PROFILE_DIR (CPU profile of the collector)

import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ATTR_CLIENT_DECLARATION,
  ATTR_CLIENT_NAME,
  ATTR_CLIENT_VERSION,
  ATTR_ERA,
  ATTR_HOST_NAME,
  ATTR_MCP_METHOD_NAME,
  ATTR_OUTCOME,
  ATTR_SERVER_DECLARATION,
  ATTR_SERVER_NAME,
  ATTR_SERVER_VERSION,
  ATTR_SERVICE_INSTANCE_ID,
  ATTR_SERVICE_NAME,
  METRICS,
} from '../../dist/contract/index.js';
import { MetricsRequest } from '../../dist/collector/otlp/proto-root.js';
import { startCollectorChild } from './lib/collector-child.mjs';
import { size } from './lib/smoke.mjs';

const POINTS = Number(process.env.BENCH_POINTS ?? size(20_000, 1000));
const EXPORTS = Number(process.env.BENCH_EXPORTS ?? 1);
const RUNS = Number(process.env.BENCH_RUNS ?? size(3, 1));
const PROFILE_DIR = process.env.BENCH_PROFILE_DIR;

const kv = (key, value) => ({ key, value: { stringValue: value } });

function wideExport(instance) {
  const now = BigInt(Date.now()) * 1_000_000n;
  const start = String(now - 60_000_000_000n);
  const time = String(now);
  const dataPoints = [];
  for (let index = 0; index < POINTS; index++) {
    const attributes = [
      kv(ATTR_SERVER_NAME, 'test-server'),
      kv(ATTR_SERVER_VERSION, '1.0.0'),
      kv(ATTR_MCP_METHOD_NAME, 'tools/call'),
      kv(ATTR_ERA, 'modern'),
      kv(ATTR_CLIENT_NAME, `client-${index % 1000}`),
      kv(ATTR_CLIENT_VERSION, `${Math.floor(index / 1000)}.0`),
      kv(ATTR_CLIENT_DECLARATION, 'declared'),
      kv(ATTR_SERVER_DECLARATION, 'declared'),
      kv(ATTR_OUTCOME, 'complete'),
    ];
    dataPoints.push({ attributes, startTimeUnixNano: start, timeUnixNano: time, asInt: '1' });
  }
  const request = {
    resourceMetrics: [
      {
        resource: { attributes: [kv(ATTR_SERVICE_NAME, 'svc'), kv(ATTR_SERVICE_INSTANCE_ID, instance), kv(ATTR_HOST_NAME, 'host-1')] },
        scopeMetrics: [
          {
            scope: { name: 'extscope', version: '0.1.0' },
            metrics: [{ name: METRICS.requests.name, sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints } }],
          },
        ],
      },
    ],
  };
  return Buffer.from(MetricsRequest.encode(MetricsRequest.fromObject(request)).finish());
}

async function probeHealth(url, until) {
  let done = false;
  void until.finally(() => (done = true));
  const latencies = [];
  while (!done) {
    const start = performance.now();
    await (await fetch(`${url}/healthz`)).arrayBuffer();
    latencies.push(performance.now() - start);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return latencies.sort((a, b) => a - b);
}

/** Asks the child's loop probe for what it saw since the last ask. */
async function loopReport(child) {
  let buffered = '';
  const line = new Promise((resolve) => {
    const onData = (chunk) => {
      buffered += chunk;
      const match = /\{"loopProbe":.*\}\n/.exec(buffered);
      if (match) {
        child.stdout.off('data', onData);
        resolve(JSON.parse(match[0]).loopProbe);
      }
    };
    child.stdout.on('data', onData);
  });
  child.kill('SIGUSR2');
  return line;
}

const dir = mkdtempSync(join(tmpdir(), 'extscope-stall-'));
const probe = fileURLToPath(new URL('./workers/loop-probe.mjs', import.meta.url));
const nodeArgs = ['--import', probe, ...(PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', PROFILE_DIR] : [])];
const { child, url } = await startCollectorChild(join(dir, 'extscope.db'), { nodeArgs });
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
try {
  console.log(`${RUNS} runs of ${EXPORTS} export(s) of ${POINTS} counted points, one after another`);
  for (let run = 0; run < RUNS; run++) {
    const bodies = Array.from({ length: EXPORTS }, (_, index) => wideExport(`wide-${run}-${index}`));
    await new Promise((resolve) => setTimeout(resolve, 500));
    await loopReport(child);
    const sending = (async () => {
      for (const body of bodies) {
        const response = await fetch(`${url}/v1/metrics`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body });
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`HTTP ${response.status}`);
      }
    })();
    const started = performance.now();
    const latencies = await probeHealth(url, sending);
    await sending;
    const elapsed = performance.now() - started;
    const loop = await loopReport(child);
    console.log(
      `run ${run + 1}: ${(bodies[0].length / 1e6).toFixed(2)} MB each, ${elapsed.toFixed(0)} ms; event loop max ${loop.maxMs.toFixed(1)} ms, p99 ${loop.p99Ms.toFixed(1)} ms, longest 1 ms-timer gap ${loop.longestGapMs.toFixed(1)} ms${PROFILE_DIR ? ` (ended at ${loop.longestGapEndUs} µs)` : ''}; ` +
        `/healthz ${latencies.length} probes, p50 ${pct(latencies, 50).toFixed(1)} ms, p99 ${pct(latencies, 99).toFixed(1)} ms, max ${(latencies.at(-1) ?? 0).toFixed(1)} ms`,
    );
  }
} finally {
  child.kill('SIGINT');
  await once(child, 'exit');
  rmSync(dir, { recursive: true, force: true });
}
