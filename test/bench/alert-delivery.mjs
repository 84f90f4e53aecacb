// Ingest latency while alert receivers are down: the time to answer one small OTLP export, sequentially, with
// (a) no receivers, (b) a webhook whose port refuses connections and an Alertmanager likewise, retrying fast, and
// (c) a webhook that accepts connections and never answers (each attempt waits out its timeout). In (b) and (c)
// the collector is handed a cycle of new transitions every BENCH_CYCLE_MS, so retries run all along (and with a
// short cycle the queue stays full). Retries are made fast (10 ms doubling to 100 ms) so that there are many.
// Delivery runs in the collector's own process, as in production.
//
//   npm run build && node test/bench/alert-delivery.mjs
//   env: BENCH_EXPORTS (2000 per scenario), BENCH_TRANSITIONS (100 per cycle), BENCH_CYCLE_MS (1000)

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCollector } from '../../dist/collector/index.js';
import * as contract from '../../dist/contract/index.js';
import { MetricsRequest } from '../../dist/collector/otlp/proto-root.js';
import { checkExact } from './lib/exactness.mjs';
import { size } from './lib/smoke.mjs';

const EXPORTS = Number(process.env.BENCH_EXPORTS ?? size(2000, 50));
const TRANSITIONS = Number(process.env.BENCH_TRANSITIONS ?? 100);
const CYCLE_MS = Number(process.env.BENCH_CYCLE_MS ?? 1000);

const kv = (key, value) => ({ key, value: { stringValue: value } });

function exportBody(i) {
  const endNs = BigInt(Date.now()) * 1_000_000n + BigInt(i);
  const attributes = [
    kv(contract.ATTR_SERVER_NAME, 'bench-server'),
    kv(contract.ATTR_SERVER_VERSION, '1.0.0'),
    kv(contract.ATTR_MCP_METHOD_NAME, 'tools/call'),
    kv(contract.ATTR_ERA, 'modern'),
    kv(contract.ATTR_CLIENT_NAME, `client-${i % 20}`),
    kv(contract.ATTR_CLIENT_VERSION, '1.0.0'),
    kv(contract.ATTR_CLIENT_DECLARATION, 'declared'),
    kv(contract.ATTR_SERVER_DECLARATION, 'declared'),
    kv(contract.ATTR_OUTCOME, 'complete'),
  ];
  return Buffer.from(
    MetricsRequest.encode(
      MetricsRequest.fromObject({
        resourceMetrics: [
          {
            resource: { attributes: [kv(contract.ATTR_SERVICE_NAME, 'bench'), kv(contract.ATTR_SERVICE_INSTANCE_ID, 'i-1')] },
            scopeMetrics: [
              {
                metrics: [
                  {
                    name: contract.METRIC_REQUESTS,
                    sum: {
                      aggregationTemporality: 1,
                      isMonotonic: true,
                      dataPoints: [{ attributes, startTimeUnixNano: String(endNs - 60_000_000_000n), timeUnixNano: String(endNs), asInt: '1' }],
                    },
                  },
                ],
              },
            ],
          },
        ],
      }),
    ).finish(),
  );
}

async function port() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Accepts connections and never answers. */
async function blackhole() {
  const sockets = new Set();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/hook`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

let sequence = 0;
function cycle() {
  const now = Date.now();
  const transitions = [];
  const firing = [];
  for (let i = 0; i < TRANSITIONS; i++) {
    const id = ++sequence;
    const alert = {
      fingerprint: `fp-${id}`,
      rule: 'advertisement-skew',
      kind: 'advertisement_skew',
      severity: 'warning',
      state: 'firing',
      labels: { alertname: 'advertisement-skew', severity: 'warning', service: `svc-${id}` },
      annotations: { summary: 'bench' },
      activeSinceMs: now - 1000,
      firingSinceMs: now,
      dashboardPath: '/#/fleet',
    };
    transitions.push({ id: `t-${id}`, from: 'pending', to: 'firing', atMs: now, alert });
    firing.push(alert);
  }
  return { atMs: now, transitions, firing };
}

async function scenario(name, delivery, cleanup = async () => undefined) {
  const dir = mkdtempSync(join(tmpdir(), 'extscope-bench-delivery-'));
  const collector = await startCollector({ host: '127.0.0.1', port: 0, dbPath: join(dir, 'db.sqlite'), delivery });
  const feeding = delivery === undefined ? undefined : setInterval(() => collector.notifier.deliver(cycle()), CYCLE_MS);
  const latencies = [];
  let failed = 0;
  try {
    for (let i = 0; i < EXPORTS; i++) {
      const body = exportBody(i);
      const start = performance.now();
      const response = await fetch(`${collector.url}/v1/metrics`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf' }, body });
      await response.arrayBuffer();
      latencies.push(performance.now() - start);
      if (response.status !== 200) failed++;
    }
  } finally {
    clearInterval(feeding);
    const metrics = await (await fetch(`${collector.url}/metrics`)).text();
    const counted = [...metrics.matchAll(/extscope_alert_deliveries_total\{receiver="(\w[\w-]*)",result="(\w+)"\} (\d+)/g)].map(
      (m) => `${m[1]} ${m[2]} ${m[3]}`,
    );
    await collector.close();
    await cleanup();
    rmSync(dir, { recursive: true, force: true });
    latencies.sort((a, b) => a - b);
    const at = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))].toFixed(2);
    console.log(`${name.padEnd(44)} exports ${EXPORTS} (non-200: ${failed})  p50 ${at(0.5)} ms  p99 ${at(0.99)} ms  max ${at(1)} ms`);
    if (counted.length > 0) console.log(`${''.padEnd(44)} ${counted.join(', ')}`);
  }
  // Alert delivery never costs an export its answer.
  checkExact(`${name}: exports answered other than 200`, failed, 0);
}

const fast = { initialDelayMs: 10, maxDelayMs: 100, maxAttempts: 1000 };
console.log(`node ${process.version}; ${TRANSITIONS} transitions handed over every ${CYCLE_MS} ms in the scenarios with receivers`);
await scenario('no receivers', undefined);
const dead = await port();
await scenario('webhook + Alertmanager refusing connections', {
  webhookUrl: `http://127.0.0.1:${dead}/hook`,
  webhookSecret: 'bench-secret-0123456789',
  alertmanagerUrls: [`http://127.0.0.1:${dead}`],
  retry: fast,
  queueCapacity: 1000,
});
const hole = await blackhole();
await scenario(
  'webhook that never answers (timeout 2 s)',
  { webhookUrl: hole.url, webhookSecret: 'bench-secret-0123456789', retry: fast, requestTimeoutMs: 2000, queueCapacity: 1000, concurrency: 2 },
  () => hole.close(),
);
