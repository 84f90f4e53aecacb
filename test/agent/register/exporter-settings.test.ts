/**
 * The standard OTEL_* exporter settings, honoured or refused out loud: OTLP over gRPC to the collector's gRPC
 * receiver, the console exporter on stderr (never stdout, which is a stdio server's protocol channel), an exporter
 * the agent does not have refused with one line at start, and a collector's partial-success answer told on stderr.
 * The server's answers are the same bytes as without the agent in each case.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRPC_EXPORTERS } from '../../../agent/register/exporters.js';
import { type TestCollector, matrix, startTestCollector, tempDir } from '../../collector/helpers/collector.js';
import { ROOT, agentEnv, fixture, rawStdioExchange, stderrBesidesRecoveredExports } from '../../support/processes.js';

/** Resolves packages as the built agent does (from agent/dist). */
const fromAgent = createRequire(join(ROOT, 'agent', 'dist', 'agent', 'register', 'exporters.js'));

const temp = await tempDir();
let collector: TestCollector;
beforeAll(async () => {
  collector = await startTestCollector(temp.dir, { grpcPort: 0 });
});
afterAll(async () => {
  await collector?.close();
  await temp.cleanup();
});

/** initialize, tools/list and two tools/call (4 requests) under `clientName`, in the 2025 era. */
function session(clientName: string): object[] {
  return [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: clientName, version: '1.0.0' } },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'a' } } },
    { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'echo', arguments: { text: 'b' } } },
  ];
}

const SERVER = fixture('v2-stdio.mjs');

async function requestsOf(client: string): Promise<number> {
  const view = await matrix(collector.url, `&service=${encodeURIComponent(client)}`);
  return view.rows.filter((row) => row.client === client).reduce((sum, row) => sum + row.requests, 0);
}

describe('exporter settings', () => {
  it('OTEL_EXPORTER_OTLP_PROTOCOL=grpc exports to the gRPC receiver: every request counted, answers unchanged', async () => {
    // The gRPC exporters are optional peers of the agent; the collector's package depends on them (for `extscope
    // wrap` and `proxy`), so the repository installs them, as a project that sets the protocol to grpc does. Without
    // them the agent refuses with one stderr line (test/packaging/pack.test.ts): this test must then fail saying why.
    for (const name of Object.values(GRPC_EXPORTERS)) expect(() => fromAgent.resolve(name), `${name} installed beside the agent`).not.toThrow();
    const client = 'grpc-protocol';
    const bare = await rawStdioExchange(SERVER, session(client), false, agentEnv(collector.url));
    const env = agentEnv(`http://${collector.grpcAddress!}`, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_SERVICE_NAME: client, EXTSCOPE_SPANS: 'false' });
    const withAgent = await rawStdioExchange(SERVER, session(client), true, env);
    expect(withAgent.stdout.equals(bare.stdout)).toBe(true);
    expect(stderrBesidesRecoveredExports(withAgent.stderr)).toBe('');
    expect(withAgent.code).toBe(0);
    await expect.poll(() => requestsOf(client), { timeout: 15_000, interval: 200 }).toBe(4);
  });

  it('OTEL_METRICS_EXPORTER=console prints the metrics on stderr, nothing on stdout beyond the answers', async () => {
    const client = 'console-exporter';
    const bare = await rawStdioExchange(SERVER, session(client), false, agentEnv(collector.url));
    const env = agentEnv(collector.url, { OTEL_METRICS_EXPORTER: 'console', OTEL_TRACES_EXPORTER: 'none', OTEL_SERVICE_NAME: client });
    const withAgent = await rawStdioExchange(SERVER, session(client), true, env);
    expect(withAgent.stdout.equals(bare.stdout)).toBe(true);
    expect(withAgent.code).toBe(0);
    expect(withAgent.stderr).toContain('extscope.requests');
    expect(withAgent.stderr).toContain(client);
    // Nothing went to the collector: the console exporter replaced OTLP.
    expect(await requestsOf(client)).toBe(0);
  });

  it('an exporter the agent does not have is refused with one stderr line at start, and OTLP used instead', async () => {
    const client = 'unknown-exporter';
    const bare = await rawStdioExchange(SERVER, session(client), false, agentEnv(collector.url));
    const env = agentEnv(collector.url, { OTEL_METRICS_EXPORTER: 'prometheus', OTEL_TRACES_EXPORTER: 'none', OTEL_SERVICE_NAME: client });
    const withAgent = await rawStdioExchange(SERVER, session(client), true, env);
    expect(withAgent.stdout.equals(bare.stdout)).toBe(true);
    expect(withAgent.code).toBe(0);
    const lines = withAgent.stderr.split('\n').filter((line) => line.length > 0);
    expect(lines).toEqual(['extscope: OTEL_METRICS_EXPORTER=prometheus: prometheus is not supported by the agent (otlp, console, none); using otlp']);
    await expect.poll(() => requestsOf(client), { timeout: 15_000, interval: 200 }).toBe(4);
  });
});

describe('partial success', () => {
  let strict: Awaited<ReturnType<typeof tempDir>>;
  let narrow: TestCollector;
  beforeAll(async () => {
    strict = await tempDir();
    // Strings longer than 40 characters are refused: a service name of 60 makes every span of the export refused.
    narrow = await startTestCollector(strict.dir, { limits: { maxAttributeLength: 40 } });
  });
  afterAll(async () => {
    await narrow?.close();
    await strict.cleanup();
  });

  it("a collector's partial-success answer is one stderr line naming what was refused and why", async () => {
    const service = `s${'x'.repeat(59)}`;
    const env = agentEnv(narrow.url, { OTEL_SERVICE_NAME: service, OTEL_METRICS_EXPORTER: 'none', EXTSCOPE_SPANS: 'true' });
    const withAgent = await rawStdioExchange(SERVER, session('partial-success'), true, env);
    expect(withAgent.code).toBe(0);
    const refused = withAgent.stderr.split('\n').filter((line) => line.includes('refused'));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatch(new RegExp(`^extscope: the collector at ${narrow.url}/v1/traces refused \\d+ spans? of an export: .*too long`));
  });
});
