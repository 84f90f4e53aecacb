import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { type ExportResult, ExportResultCode } from '@opentelemetry/core';
import { OTLPMetricExporter as GrpcMetricExporter } from '@opentelemetry/exporter-metrics-otlp-grpc';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCollector, startCollector } from '../../../collector/index.js';
import { ExportHealth, FAILING_LINE_INTERVAL_MS } from '../../../agent/register/export-health.js';
import { freePort } from '../../support/counting-clients.js';
import { agentEnv, fixture, rawStdioExchange, ROOT, nodeArgs } from '../../support/processes.js';

const CORPUS = [
  {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'health-client', version: '1.0.0' } },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
  { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
];

const failingLines = (stderr: string, signal: string) =>
  stderr.split('\n').filter((line) => line.startsWith(`extscope: exporting ${signal} to `) && line.includes(' fails ('));

/** Every stdout line is an answer to one of the corpus's requests: nothing else was written there. */
function expectOnlyAnswers(stdout: Buffer): void {
  const lines = stdout.toString('utf8').trimEnd().split('\n');
  expect(lines).toHaveLength(3);
  expect(lines.map((line) => (JSON.parse(line) as { id: unknown }).id)).toEqual([0, 1, 2]);
}

let dir: string;
let collector: RunningCollector;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'extscope-export-health-'));
  collector = await startCollector({ dbPath: join(dir, 'token.db'), port: 0, ingestToken: 'the-right-token' });
});
afterAll(async () => {
  await collector?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('failing exports are said on stderr, never stdout', () => {
  it('a wrong ingest token (401): one line on stderr naming the status and the token, nothing on stdout but answers', async () => {
    const env = agentEnv(collector.url, { OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer not-the-token', OTEL_TRACES_EXPORTER: 'none' });
    const { stdout, stderr, code } = await rawStdioExchange(fixture('v2-stdio.cjs'), CORPUS, true, env);
    expect(code).toBe(0);
    expectOnlyAnswers(stdout);
    const lines = failingLines(stderr, 'metrics');
    expect(lines, stderr).toHaveLength(1);
    expect(lines[0]).toContain('(HTTP 401)');
    expect(lines[0]).toContain('OTEL_EXPORTER_OTLP_HEADERS');
    expect(lines[0]).toContain(`${collector.url}/v1/metrics`);
  });

  it('an unreachable collector: one line per signal on stderr, nothing on stdout but answers', async () => {
    const port = await freePort();
    // The default interval: the export at exit is the one that fails.
    const env = agentEnv(`http://127.0.0.1:${port}`, { OTEL_METRIC_EXPORT_INTERVAL: '60000' });
    const { stdout, stderr, code } = await rawStdioExchange(fixture('v2-stdio.cjs'), CORPUS, true, env);
    expect(code).toBe(0);
    expectOnlyAnswers(stdout);
    const metrics = failingLines(stderr, 'metrics');
    expect(metrics, stderr).toHaveLength(1);
    expect(metrics[0]).toContain('ECONNREFUSED');
    expect(metrics[0]).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
    expect(failingLines(stderr, 'traces').length).toBeLessThanOrEqual(1);
  });

  it('an unreachable collector and an export interval shorter than the retry backoff: the server still exits when its client leaves', async () => {
    const port = await freePort();
    // Each export's retries end within half the interval, so the event loop is idle between exports.
    const env = agentEnv(`http://127.0.0.1:${port}`, { OTEL_METRIC_EXPORT_INTERVAL: '200', OTEL_TRACES_EXPORTER: 'none' });
    // Connected long enough for several exports to fail and retry; then the process must end on its own.
    const { stdout, stderr, code } = await rawStdioExchange(fixture('v2-stdio.cjs'), CORPUS, true, env, [], { lingerMs: 1500, exitWithinMs: 15_000 });
    expect(code, 'killed after 15 s: the process did not exit when its client left').toBe(0);
    expectOnlyAnswers(stdout);
    expect(failingLines(stderr, 'metrics'), stderr).toHaveLength(1);
  }, 30_000);

  it('a collector that comes up later: "fails", then one "works again" line, and the counts arrive', async () => {
    const port = await freePort();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: nodeArgs(fixture('v2-stdio.mjs'), true),
      cwd: ROOT,
      env: agentEnv(`http://127.0.0.1:${port}`, { OTEL_TRACES_EXPORTER: 'none' }),
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const client = new Client({ name: 'late-collector-client', version: '1.0.0' });
    await client.connect(transport);
    await client.callTool({ name: 'echo', arguments: { text: 'x' } });
    let late: RunningCollector | undefined;
    try {
      await expect.poll(() => failingLines(stderr, 'metrics').length, { timeout: 10_000 }).toBe(1);
      late = await startCollector({ dbPath: join(dir, 'late.db'), port });
      await expect.poll(() => stderr, { timeout: 10_000 }).toMatch(/extscope: exporting metrics to \S+ works again \(\d+ exports? had failed\)/);
      const rows = async () =>
        ((await (await fetch(`${late!.url}/api/v1/matrix?from=2020-01-01T00:00:00Z`)).json()) as { rows: { client: string; requests: number }[] }).rows;
      await expect.poll(async () => (await rows()).find((row) => row.client === 'late-collector-client')?.requests, { timeout: 10_000 }).toBe(2);
      expect(failingLines(stderr, 'metrics')).toHaveLength(1);
      expect(stderr.match(/works again/g)).toHaveLength(1);
    } finally {
      await client.close();
      await late?.close();
    }
  });
});

describe('ExportHealth', () => {
  const failed = { code: ExportResultCode.FAILED, error: Object.assign(new Error('Unauthorized'), { code: 401 }) };
  const ok = { code: ExportResultCode.SUCCESS };

  it('says a failure once, its recovery once, and a failure again only after the interval', () => {
    const lines: string[] = [];
    const counted: string[] = [];
    let now = 0;
    const health = new ExportHealth(
      (line) => lines.push(line),
      (signal) => counted.push(signal),
      () => now,
    );
    for (let i = 0; i < 5; i++) health.report('metrics', 'http://c/v1/metrics', failed);
    health.report('metrics', 'http://c/v1/metrics', ok);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain('works again (5 exports had failed)');
    // Flapping within the interval: counted, not said again (and so no recovery line either).
    now += 1000;
    health.report('metrics', 'http://c/v1/metrics', failed);
    health.report('metrics', 'http://c/v1/metrics', ok);
    expect(lines).toHaveLength(2);
    now += FAILING_LINE_INTERVAL_MS;
    health.report('metrics', 'http://c/v1/metrics', failed);
    expect(lines).toHaveLength(3);
    expect(counted).toEqual(Array(7).fill('metrics'));
  });

  it('keeps each signal apart', () => {
    const lines: string[] = [];
    const health = new ExportHealth(
      (line) => lines.push(line),
      () => {},
    );
    health.report('metrics', 'm', failed);
    health.report('traces', 't', failed);
    health.report('traces', 't', ok);
    expect(lines.map((line) => line.slice(0, 32))).toEqual([
      'extscope: exporting metrics to m',
      'extscope: exporting traces to t ',
      'extscope: exporting traces to t ',
    ]);
  });

  it('names a gRPC status as gRPC, not HTTP: a collector that accepts and never answers is DEADLINE_EXCEEDED, with the reachability hint', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const exporter = new GrpcMetricExporter({ url: `http://127.0.0.1:${port}`, timeoutMillis: 300 });
    try {
      const result = await new Promise<ExportResult>((resolve) => exporter.export({ resource: resourceFromAttributes({}), scopeMetrics: [] }, resolve));
      expect(result.code).toBe(ExportResultCode.FAILED);
      const lines: string[] = [];
      new ExportHealth(
        (line) => lines.push(line),
        () => {},
      ).report('metrics', `http://127.0.0.1:${port}`, result);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('fails (gRPC DEADLINE_EXCEEDED)');
      expect(lines[0]).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
      expect(lines[0]).not.toContain('HTTP 4');
    } finally {
      await exporter.shutdown();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
