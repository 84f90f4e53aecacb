import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OtlpSink, startOtlpSink } from '../support/otlp-sink.js';
import { ROOT, agentEnv, fixture, nodeArgs, rawStdioExchange, stderrBesidesRecoveredExports } from '../support/processes.js';
import { freePort } from '../support/counting-clients.js';
import { bundleFixture } from './bundle.js';

const ENVELOPE = (extensions: Record<string, unknown>) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw-client', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions },
});

const hostileExtensions = Object.fromEntries([
  ['not an id', {}],
  ['__proto__', {}],
  [`com.example/${'x'.repeat(5000)}`, {}],
  ...Array.from({ length: 100 }, (_, i) => [`com.junk/id-${i}`, { i }]),
]);

/** Successes and errors of the 2026-07-28 era, one connection. */
const MODERN_CORPUS = [
  { jsonrpc: '2.0', id: 'probe', method: 'server/discover', params: { _meta: ENVELOPE({ 'io.modelcontextprotocol/tasks': {} }) } },
  {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'echo', arguments: { text: 'hi' }, _meta: ENVELOPE({ 'io.modelcontextprotocol/tasks': {} }) },
  },
  { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'fails', arguments: {}, _meta: ENVELOPE({}) } },
  { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'missing', arguments: {}, _meta: ENVELOPE({}) } },
  { jsonrpc: '2.0', id: 4, method: 'no/such/method', params: { _meta: ENVELOPE({}) } },
  { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'echo', arguments: { text: 'no envelope' } } },
  { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'echo', arguments: { text: 42 }, _meta: ENVELOPE({}) } },
  { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: ENVELOPE(hostileExtensions) } },
  {
    jsonrpc: '2.0',
    id: 'traced',
    method: 'tools/call',
    params: { name: 'echo', arguments: { text: 't' }, _meta: { ...ENVELOPE({}), traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } },
  },
];

/** The 2025 era: initialize, then requests without envelopes. */
const LEGACY_CORPUS = [
  {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {}, 'com.example/replay': { maxAttempts: 3 } } },
      clientInfo: { name: 'raw-legacy', version: '0.1.0' },
    },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
  { jsonrpc: '2.0', id: 2, method: 'ping' },
  { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'fails', arguments: {} } },
  { jsonrpc: '2.0', id: 4, method: 'no/such/method', params: {} },
  { jsonrpc: '2.0', id: 5, method: 'tools/list', params: {} },
  { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'echo' } },
];

let sink: OtlpSink;
let bundles: string;
beforeAll(async () => {
  sink = await startOtlpSink();
  bundles = await mkdtemp(join(tmpdir(), 'extscope-bundles-'));
});
afterAll(async () => {
  await sink.close();
  await rm(bundles, { recursive: true, force: true });
});

const cases = [
  { script: 'v2-stdio.mjs', corpus: MODERN_CORPUS, era: 'modern' },
  { script: 'v2-stdio.cjs', corpus: LEGACY_CORPUS, era: 'legacy' },
  { script: 'v1-stdio.mjs', corpus: LEGACY_CORPUS, era: 'legacy' },
  { script: 'v1-stdio.cjs', corpus: LEGACY_CORPUS, era: 'legacy' },
] as const;

describe('wire transparency: the same bytes on stdout with and without the agent', () => {
  for (const { script, corpus, era } of cases) {
    it(`${script}, ${era} corpus`, async () => {
      const env = agentEnv(sink.url);
      const plain = await rawStdioExchange(fixture(script), corpus, false, env);
      const instrumented = await rawStdioExchange(fixture(script), corpus, true, env);
      const answers = corpus.filter((line) => 'id' in line).length;

      expect(plain.code).toBe(0);
      expect(instrumented.code).toBe(0);
      const lines = instrumented.stdout.toString('utf8').trimEnd().split('\n');
      expect(lines).toHaveLength(answers);
      for (const line of lines) expect(JSON.parse(line)).toMatchObject({ jsonrpc: '2.0' });
      expect(instrumented.stdout.equals(plain.stdout)).toBe(true);
      expect(stderrBesidesRecoveredExports(instrumented.stderr)).toBe(plain.stderr);

      // And the agent did see them: every answered request is counted once.
      const server = script.startsWith('v1')
        ? `fixture-v1-${script.endsWith('.mjs') ? 'esm' : 'cjs'}`
        : `fixture-v2-${script.endsWith('.mjs') ? 'esm' : 'cjs'}`;
      await expect.poll(() => sink.sum('extscope.requests', { 'extscope.server.name': server }), { timeout: 10_000 }).toBe(answers);
    });
  }
});

/** Raw HTTP requests to createMcpHandler: answers from server instances and from the entry itself. */
const HTTP_CORPUS: { headers?: Record<string, string>; body: string; contentType?: string }[] = [
  // No Mcp-Method header: refused by the entry for the header/body mismatch.
  {
    body: JSON.stringify({ jsonrpc: '2.0', id: 'probe', method: 'server/discover', params: { _meta: ENVELOPE({ 'io.modelcontextprotocol/tasks': {} }) } }),
    headers: { 'mcp-protocol-version': '2026-07-28' },
  },
  {
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' }, _meta: ENVELOPE({}) } }),
    headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
  },
  {
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'fails', arguments: {}, _meta: ENVELOPE({}) } }),
    headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'fails' },
  },
  {
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/list',
      params: { _meta: { ...ENVELOPE({}), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
    }),
    headers: { 'mcp-protocol-version': '2099-01-01' },
  },
  {
    body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: ENVELOPE(hostileExtensions) } }),
    headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
  },
  {
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  },
  { body: '{ not json', headers: {} },
  { body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list' }), contentType: 'text/plain' },
];

/** Requests the bundled HTTP server's process recorded (its resource's service name is the server's). */
function bundledHttpTotal(service = 'fixture-bundled-v2-http', instance?: string): number {
  const latest = new Map<string, number>();
  for (const point of sink.points) {
    if (point.metric !== 'extscope.requests' || point.resource['service.name'] !== service) continue;
    if (instance !== undefined && point.resource['process.pid'] !== Number(instance)) continue;
    latest.set(JSON.stringify([point.resource['service.instance.id'], point.attributes, point.startTimeUnixNano]), point.value);
  }
  return [...latest.values()].reduce((sum, value) => sum + value, 0);
}

async function httpExchange(agent: boolean, script = fixture('v2-http.mjs')): Promise<string[]> {
  const child = spawn(process.execPath, nodeArgs(script, agent), { cwd: ROOT, env: agentEnv(sink.url) });
  const exited = once(child, 'exit');
  try {
    const [line] = (await once(child.stdout, 'data')) as [Buffer];
    const url = `http://127.0.0.1:${(JSON.parse(line.toString('utf8')) as { port: number }).port}/mcp`;
    const answers: string[] = [];
    for (const request of HTTP_CORPUS) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': request.contentType ?? 'application/json', accept: 'application/json, text/event-stream', ...request.headers },
        body: request.body,
      });
      answers.push(`${response.status} ${response.headers.get('content-type')} ${await response.text()}`);
    }
    return answers;
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

describe('wire transparency over HTTP (createMcpHandler)', () => {
  it('gives the same status, content type and body with and without the agent', async () => {
    const plain = await httpExchange(false);
    const instrumented = await httpExchange(true);
    expect(instrumented).toEqual(plain);
    // From instances: 200s. From the entry: header/body mismatch (-32020), unsupported revision (-32022), parse error, 415.
    expect(plain.map((answer) => answer.slice(0, 3))).toEqual(['400', '200', '200', '400', '200', '200', '400', '415']);
    expect(plain[0]).toContain('-32020');
    expect(plain[3]).toContain('-32022');
  });
});

/** A server's answer for each request of the corpus, and whether its text is the same from run to run. */
const APPS_CORPUS = [
  {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } },
      clientInfo: { name: 'raw-apps', version: '0.1.0' },
    },
  },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
  // A 200 kB answer (the app's HTML): larger than any pipe chunk.
  { jsonrpc: '2.0', id: 2, method: 'resources/read', params: { uri: 'ui://get-time/mcp-app.html' } },
  { jsonrpc: '2.0', id: 3, method: 'no/such/method', params: {} },
  { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'missing', arguments: {} } },
];

describe('wire transparency for servers with a bundled SDK copy (the wire fallback records them)', () => {
  const bundled = [
    { entry: 'bundled-v2-stdio.mjs', corpus: MODERN_CORPUS, era: 'modern', server: 'fixture-bundled-v2' },
    { entry: 'bundled-v2-stdio.mjs', corpus: LEGACY_CORPUS, era: 'legacy', server: 'fixture-bundled-v2' },
    { entry: 'bundled-v1-stdio.mjs', corpus: LEGACY_CORPUS, era: 'legacy', server: 'fixture-bundled-v1' },
  ] as const;
  for (const { entry, corpus, era, server } of bundled) {
    it(`${entry} (esbuild bundle), ${era} corpus: same bytes on stdout, every answer counted`, async () => {
      const script = await bundleFixture(entry, bundles);
      const env = agentEnv(sink.url);
      const before = sink.sum('extscope.requests', { 'extscope.server.name': server });
      const plain = await rawStdioExchange(script, corpus, false, env);
      const instrumented = await rawStdioExchange(script, corpus, true, env);
      const answers = corpus.filter((line) => 'id' in line).length;

      expect(plain.code).toBe(0);
      expect(instrumented.code).toBe(0);
      expect(instrumented.stdout.toString('utf8').trimEnd().split('\n')).toHaveLength(answers);
      expect(instrumented.stdout.equals(plain.stdout)).toBe(true);
      expect(stderrBesidesRecoveredExports(instrumented.stderr)).toBe(plain.stderr);
      await expect.poll(() => sink.sum('extscope.requests', { 'extscope.server.name': server }) - before, { timeout: 10_000 }).toBe(answers);
    });
  }

  it('the modern corpus on a bundled server: the server map is read from its server/discover answer, per request envelope', async () => {
    // Filled by the modern case above (same file, run in order).
    const negotiated = sink.sum('extscope.extension.requests', {
      'extscope.server.name': 'fixture-bundled-v2',
      'extscope.era': 'modern',
      'extscope.extension.id': 'io.modelcontextprotocol/tasks',
      'extscope.extension.negotiated': true,
    });
    // The probe and call 1 declare tasks; every other request declares {} (or has no envelope).
    expect(negotiated).toBe(2);
    const serverOnly = sink.sum('extscope.extension.requests', {
      'extscope.server.name': 'fixture-bundled-v2',
      'extscope.era': 'modern',
      'extscope.extension.id': 'com.example/search',
      'extscope.extension.server_declared': true,
      'extscope.extension.client_declared': false,
    });
    expect(serverOnly).toBe(MODERN_CORPUS.length - 1);
  });

  it('an MCP Apps server from npm on stdio: same bytes, 200 kB answers included, every answer counted', async () => {
    const script = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-basic-vanillajs')), 'index.js');
    const env = agentEnv(sink.url);
    const server = 'Basic MCP App Server (Vanilla JS)';
    const before = sink.sum('extscope.requests', { 'extscope.server.name': server });
    const withArgs = (agent: boolean) => rawStdioExchange(script, APPS_CORPUS, agent, env, ['--stdio']);
    const plain = await withArgs(false);
    const instrumented = await withArgs(true);
    expect(plain.stdout.length).toBeGreaterThan(200_000);
    expect(instrumented.stdout.equals(plain.stdout)).toBe(true);
    expect(stderrBesidesRecoveredExports(instrumented.stderr)).toBe(plain.stderr);
    await expect.poll(() => sink.sum('extscope.requests', { 'extscope.server.name': server }) - before, { timeout: 10_000 }).toBe(5);
    expect(sink.sum('extscope.requests', { 'extscope.server.name': server, 'mcp.method.name': 'resources/read', 'extscope.outcome': 'complete' })).toBe(1);
    expect(
      sink.sum('extscope.requests', {
        'extscope.server.name': server,
        'mcp.method.name': 'no/such/method',
        'extscope.outcome': 'error',
        'rpc.response.status_code': '-32601',
      }),
    ).toBe(1);
  });

  it('a bundled createMcpHandler server over HTTP: same status, content type and body with and without the agent, every answer counted', async () => {
    const script = await bundleFixture('bundled-v2-http.mjs', bundles);
    const server = 'fixture-bundled-v2-http';
    const plain = await httpExchange(false, script);
    const instrumented = await httpExchange(true, script);
    expect(instrumented).toEqual(plain);
    expect(plain.map((answer) => answer.slice(0, 3))).toEqual(['400', '200', '200', '400', '200', '200', '400', '415']);
    // Every POST whose body is a JSON-RPC request (not the unparsable one, whose answer has no request to
    // belong to) is an answered request.
    await expect.poll(() => bundledHttpTotal(), { timeout: 10_000 }).toBe(7);
    // The initialize answer names the server; the others, on fresh instances, are answered with no server known.
    expect(sink.sum('extscope.requests', { 'extscope.server.name': server, 'mcp.method.name': 'initialize' })).toBe(1);
  });
});

/** Raw MCP POSTs to an MCP Apps server over HTTP (stateless, one fresh server per request). */
const APPS_HTTP_CORPUS = [
  { jsonrpc: '2.0', id: 'server-discover-probe-1', method: 'server/discover', params: { _meta: ENVELOPE({ 'io.modelcontextprotocol/ui': {} }) } },
  APPS_CORPUS[0],
  APPS_CORPUS[2],
  APPS_CORPUS[3],
  APPS_CORPUS[4],
  { jsonrpc: '2.0', method: 'notifications/initialized' },
];

/** `agent`: also waits, before stopping the server, until its process exported `expected` requests. */
async function appsHttpExchange(agent: boolean, expected = 0): Promise<string[]> {
  const script = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-basic-vanillajs')), 'index.js');
  const port = await freePort();
  const child = spawn(process.execPath, nodeArgs(script, agent), { cwd: ROOT, env: agentEnv(sink.url, { PORT: String(port) }) });
  const exited = once(child, 'exit');
  try {
    await once(child.stdout, 'data');
    const answers: string[] = [];
    for (const body of APPS_HTTP_CORPUS) {
      const response = await fetch(`http://127.0.0.1:${port}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        body: JSON.stringify(body),
      });
      answers.push(`${response.status} ${response.headers.get('content-type')} ${await response.text()}`);
    }
    // Its SIGTERM handler exits at once: the periodic export carries the counts while it runs.
    if (agent) await expect.poll(() => bundledHttpTotal('Basic MCP App Server (Vanilla JS)', String(child.pid)), { timeout: 10_000 }).toBe(expected);
    return answers;
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

describe('wire transparency over HTTP for an MCP Apps server from npm (express, SSE answers)', () => {
  it('gives the same status, content type and body with and without the agent, and counts every request', async () => {
    const plain = await appsHttpExchange(false);
    // Five requests and a notification.
    const instrumented = await appsHttpExchange(true, 5);
    expect(instrumented).toEqual(plain);
    expect(plain.map((answer) => answer.slice(0, 3))).toEqual(['200', '200', '200', '200', '200', '202']);
    // The probe and the unknown method: JSON-RPC errors inside an event stream.
    expect(plain[0]).toContain('-32601');
    expect(plain[4]).toContain('-32601');
    expect(plain[3]!.length).toBeGreaterThan(200_000);
  });
});
