/**
 * A real OpenTelemetry Collector between the agent and extscope, configured with deploy/otelcol/extscope.yaml
 * exactly as users read it (the environment variables it documents give it loopback ports, a storage directory
 * and the two destinations). The Collector is built by scripts/build-otelcol.sh (cached after the first build).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildCollector, spawnCollector, tempDir } from '../collector/helpers/collector.js';
import { countingClient, freePort, matrixRequests } from '../support/counting-clients.js';
import { type OtlpSink, startOtlpSink } from '../support/otlp-sink.js';
import { ROOT, agentEnv, fixture, nodeArgs, rawStdioExchange } from '../support/processes.js';

const CONFIG = join(ROOT, 'deploy/otelcol/extscope.yaml');
const EXPORT_INTERVAL_MS = 250;
const TOKEN = 'otelcol-test-ingest-token';
/** A cold build compiles the Collector and its dependencies (minutes on a loaded 2-core machine). */
const BUILD_TIMEOUT_MS = 40 * 60_000;
/** Bounds on waiting for a process to start, not timings: the machine may be busy with other test runs. */
const START_WITHIN_MS = 90_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function buildCollector(): Promise<string> {
  const { stdout } = await promisify(execFile)('bash', [join(ROOT, 'scripts/build-otelcol.sh')], { timeout: BUILD_TIMEOUT_MS, maxBuffer: 16 << 20 });
  const binary = stdout.trim().split('\n').at(-1);
  if (binary === undefined || binary === '') throw new Error('scripts/build-otelcol.sh printed no binary path');
  return binary;
}

interface Otelcol {
  child: ChildProcess;
  output: string[];
  exited: Promise<unknown>;
}

/** Runs the Collector with the users' file, and waits for its "ready" line. */
async function startOtelcol(binary: string, overrides: string, env: Record<string, string>): Promise<Otelcol> {
  // The second file turns the Collector's own telemetry off (its port, 8888 unless OTELCOL_TELEMETRY_PORT moves it, is not needed here).
  const child = spawn(binary, ['--config', `file:${CONFIG}`, '--config', `file:${overrides}`], {
    env: { PATH: process.env['PATH'] ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = once(child, 'exit');
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the OpenTelemetry Collector did not start:\n${output.join('')}`)), START_WITHIN_MS);
    const onData = (chunk: Buffer): void => {
      output.push(chunk.toString());
      if (output.join('').includes('Everything is ready')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the OpenTelemetry Collector exited before it was ready:\n${output.join('')}`));
    });
  });
  return { child, output, exited };
}

async function stop(process: { child: ChildProcess; exited: Promise<unknown> }, signal: NodeJS.Signals): Promise<void> {
  if (process.child.exitCode !== null || process.child.signalCode !== null) return;
  process.child.kill(signal);
  await process.exited;
}

/** extscope's `/metrics` value of a series (0 when absent). */
async function selfMetric(url: string, series: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split('\n').find((entry) => entry.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

let dir: Awaited<ReturnType<typeof tempDir>>;
let binary: string;
let sink: OtlpSink | undefined;
let extscope: ChildCollector | undefined;
let otelcol: Otelcol | undefined;
let server: ChildProcess | undefined;
beforeAll(async () => {
  dir = await tempDir();
  binary = await buildCollector();
}, BUILD_TIMEOUT_MS);
afterAll(async () => {
  if (server !== undefined && server.exitCode === null && server.signalCode === null) {
    const exited = once(server, 'exit');
    server.kill('SIGKILL');
    await exited;
  }
  if (otelcol !== undefined) await stop(otelcol, 'SIGKILL');
  if (extscope !== undefined) await stop(extscope, 'SIGKILL');
  await sink?.close();
  await dir.cleanup();
});

describe('end to end: agent → OpenTelemetry Collector (deploy/otelcol/extscope.yaml) → extscope', () => {
  it('counts every request exactly across restarts and kills of either, and routes only extscope.* metrics to extscope', async () => {
    sink = await startOtlpSink();
    const [otlpGrpcPort, otlpHttpPort, extscopePort, extscopeGrpcPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const overrides = join(dir.dir, 'test-overrides.yaml');
    await writeFile(overrides, 'service:\n  telemetry:\n    metrics:\n      level: none\n');
    const otelcolEnv = {
      OTELCOL_OTLP_GRPC_ENDPOINT: `127.0.0.1:${otlpGrpcPort}`,
      OTELCOL_OTLP_HTTP_ENDPOINT: `127.0.0.1:${otlpHttpPort}`,
      OTELCOL_STORAGE_DIR: join(dir.dir, 'otelcol-storage'),
      EXTSCOPE_ENDPOINT: `http://127.0.0.1:${extscopePort}`,
      EXTSCOPE_INGEST_TOKEN: TOKEN,
      MAIN_BACKEND_ENDPOINT: sink.url,
    };
    // extscope beside a Collector that owns the OTLP ports: both of its own ports chosen (the port advice).
    const startExtscope = () =>
      spawnCollector(
        join(dir.dir, 'extscope.db'),
        ['--port', String(extscopePort), '--grpc-port', String(extscopeGrpcPort)],
        { EXTSCOPE_INGEST_TOKEN: TOKEN },
        { startWithinMs: START_WITHIN_MS },
      );
    extscope = await startExtscope();
    const extscopeUrl = extscope.url;
    otelcol = await startOtelcol(binary, overrides, otelcolEnv);
    const collectorEndpoint = `http://127.0.0.1:${otlpHttpPort}`;

    // A long-lived HTTP server whose application has its own OpenTelemetry SDK and metric (app.uptime).
    server = spawn(process.execPath, nodeArgs(fixture('v2-http-sessions.mjs'), true, [fixture('app-own-metrics.mjs')]), {
      cwd: ROOT,
      env: agentEnv(collectorEndpoint, { OTEL_METRIC_EXPORT_INTERVAL: String(EXPORT_INTERVAL_MS) }),
    });
    const [line] = (await once(server.stdout!, 'data')) as [Buffer];
    const base = `http://127.0.0.1:${(JSON.parse(line.toString('utf8')) as { port: number }).port}`;
    const clients = [
      await countingClient('otelcol-modern-a', new URL(`${base}/mcp`), true),
      await countingClient('otelcol-modern-b', new URL(`${base}/mcp`), true),
      await countingClient('otelcol-legacy', new URL(`${base}/session`), false),
    ];
    let stopTraffic = false;
    const traffic = clients.map(async ({ client }) => {
      for (let i = 0; i < 5000 && !stopTraffic; i++) {
        const result = await client.callTool({ name: 'echo', arguments: { text: `call ${i}` } });
        expect(result.isError).toBeFalsy();
        await sleep(5);
      }
    });
    const answered = () => clients.reduce((sum, { counted }) => sum + counted.answers, 0);
    const trafficGoesOn = async () => {
      const before = answered();
      await expect.poll(answered, { timeout: 30_000, interval: 50 }).toBeGreaterThan(before);
    };
    const calls = 4; // of the stdio server that lives while extscope is down
    try {
      // Through the Collector into the matrix.
      await expect.poll(async () => Object.keys(await matrixRequests(extscopeUrl)).length, { timeout: 20_000, interval: 100 }).toBe(clients.length);

      // The OpenTelemetry Collector stopped (SIGTERM) and started again; then killed (SIGKILL) and started again.
      for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
        await stop(otelcol, signal);
        await sleep(1000);
        await trafficGoesOn();
        otelcol = await startOtelcol(binary, overrides, otelcolEnv);
        await sleep(1000);
      }

      // extscope killed. While it is down, a stdio server lives and ends: its last export waits in the Collector's
      // queue on disk, across a restart of the Collector, until extscope is back.
      await stop(extscope, 'SIGKILL');
      await trafficGoesOn();
      const exchange = await rawStdioExchange(
        fixture('v2-stdio.mjs'),
        [
          {
            jsonrpc: '2.0',
            id: 0,
            method: 'initialize',
            params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'otelcol-stdio', version: '1.0.0' } },
          },
          { jsonrpc: '2.0', method: 'notifications/initialized' },
          ...Array.from({ length: calls }, (_, i) => ({
            jsonrpc: '2.0',
            id: i + 1,
            method: 'tools/call',
            params: { name: 'echo', arguments: { text: `queued ${i}` } },
          })),
        ],
        true,
        agentEnv(collectorEndpoint, { OTEL_METRIC_EXPORT_INTERVAL: String(EXPORT_INTERVAL_MS) }),
        [],
        { answerWithinMs: 60_000 },
      );
      expect(exchange.code).toBe(0);
      await stop(otelcol, 'SIGTERM');
      otelcol = await startOtelcol(binary, overrides, otelcolEnv);
      extscope = await startExtscope();

      // extscope stopped (SIGTERM) and started again.
      await sleep(1000);
      await stop(extscope, 'SIGTERM');
      await trafficGoesOn();
      extscope = await startExtscope();
      await sleep(1000);

      stopTraffic = true;
      await Promise.all(traffic);
    } finally {
      // On a failure too: no call left running into the processes afterAll ends.
      stopTraffic = true;
      await Promise.allSettled(traffic);
    }
    for (const { client } of clients) await client.close();
    const expected = { ...Object.fromEntries(clients.map(({ name, counted }) => [name, counted.answers])), 'otelcol-stdio': 1 + calls };
    await expect.poll(() => matrixRequests(extscopeUrl), { timeout: 60_000, interval: 250 }).toEqual(expected);
    // And it stays exact: later exports (the same running totals) add nothing.
    await sleep(4 * EXPORT_INTERVAL_MS);
    expect(await matrixRequests(extscopeUrl)).toEqual(expected);

    // The application's own metric went to the main backend, and only there; extscope's went only to extscope.
    expect(sink.points.some((point) => point.metric === 'app.uptime')).toBe(true);
    expect(sink.points.filter((point) => point.metric.startsWith('extscope.')).map((point) => point.metric)).toEqual([]);
    // Since extscope's last start, app.uptime was exported every 250 ms; none of it reached extscope.
    expect(await selfMetric(extscopeUrl, 'extscope_collector_points_ignored_total{reason="unknown_metric"}')).toBe(0);
    expect(await selfMetric(extscopeUrl, 'extscope_collector_points_total{result="applied"}')).toBeGreaterThan(0);
  }, 600_000);
});
