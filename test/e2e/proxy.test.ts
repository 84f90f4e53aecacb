import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import { type Socket, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCollector, startCollector } from '../../collector/index.js';
import { freePort } from '../support/counting-clients.js';
import { extensionCounts, matrixByClient, pollRequests } from '../support/matrix.js';
import { agentEnv, fixture } from '../support/processes.js';
import { type ListeningChild, startListening, startProxyProcess } from '../support/servers.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const SEARCH = 'com.example/search';
const CORPUS = 'com.example/corpus';

let collector: RunningCollector;
let dir: string;
const children: ListeningChild[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'extscope-proxy-'));
  collector = await startCollector({ dbPath: join(dir, 'extscope.db'), port: 0 });
});
// Each test's servers and proxies stop with it: a proxy exports its last counts as it stops.
afterEach(async () => {
  await Promise.all(children.splice(0).map((child) => child.stop()));
});
afterAll(async () => {
  await collector?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A fixture server (no agent) and `extscope proxy` in front of it, exporting as `service`. */
async function proxied(script: string, service: string): Promise<{ upstream: ListeningChild; proxy: ListeningChild }> {
  const upstream = await startListening(process.execPath, [fixture(script)], agentEnv(collector.url));
  children.push(upstream);
  const proxy = await startProxyProcess(upstream.url, agentEnv(collector.url, { OTEL_SERVICE_NAME: service }), upstream.url.pathname);
  children.push(proxy);
  return { upstream, proxy };
}

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

const MODERN_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28' };
const envelope = (name: string, extensions: Record<string, object>) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name, version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions },
});

/** A POST as raw bytes both ways (no decompression), through node:http. */
function post(url: URL, body: string | Buffer, headers: Record<string, string>, onFirstChunk?: (chunk: Buffer) => void): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => {
        if (chunks.length === 0) onFirstChunk?.(chunk);
        chunks.push(chunk);
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** What a client may compare between the direct answer and the proxied one (the date and hop headers differ). */
function comparable(answer: RawAnswer) {
  const { date: _date, connection: _connection, 'keep-alive': _keepAlive, 'transfer-encoding': _te, ...headers } = answer.headers;
  return { status: answer.status, headers, body: answer.body.toString('base64') };
}

async function peakRss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match === null ? 0 : Number(match[1]) * 1024;
}

describe('extscope proxy: a Streamable HTTP server measured from in between', () => {
  it('counts 2026-07-28, 2025-era and v1 clients exactly, with their declarations and negotiated ids', async () => {
    const service = 'proxied-v2';
    const { proxy } = await proxied('v2-http.mjs', service);
    const alpha = new Client(
      { name: 'proxy-alpha', version: '1.0.0' },
      { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: 'auto' } },
    );
    await alpha.connect(new StreamableHTTPClientTransport(proxy.url));
    expect(alpha.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    await alpha.callTool({ name: 'echo', arguments: { text: 'a' } });
    await alpha.callTool({ name: 'fails', arguments: {} });
    await alpha.close();
    // 2025 era against a fresh server per request: the call after initialize is a stranger to it (unknown).
    const beta = new Client({ name: 'proxy-beta', version: '2.0.0' }, { capabilities: { extensions: { [SEARCH]: {} } } });
    await beta.connect(new StreamableHTTPClientTransport(proxy.url));
    await beta.callTool({ name: 'echo', arguments: { text: 'b' } });
    await beta.close();

    const sessions = await proxied('v1-http-sessions.mjs', 'proxied-v1');
    const gamma = new V1Client({ name: 'proxy-gamma', version: '3.0.0' }, { capabilities: { extensions: { [SEARCH]: {}, [CORPUS]: {} } } });
    await gamma.connect(new V1StreamableHTTPClientTransport(sessions.proxy.url));
    await gamma.listTools();
    await gamma.callTool({ name: 'echo', arguments: { text: 'g' } });
    await gamma.close();

    await pollRequests(collector.url, { 'proxy-alpha@1.0.0': 3, 'proxy-beta@2.0.0': 1 }, service);
    const rows = await matrixByClient(collector.url, service);
    const alphaRow = rows.get('proxy-alpha@1.0.0');
    expect(alphaRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 3 });
    expect(extensionCounts(alphaRow, TASKS)).toEqual({ client: 3, server: 3, negotiated: 3 });
    expect(extensionCounts(alphaRow, SEARCH)).toEqual({ client: 0, server: 3, negotiated: 0 });
    expect(extensionCounts(rows.get('proxy-beta@2.0.0'), SEARCH)).toEqual({ client: 1, server: 1, negotiated: 1 });
    const strangers = [...rows.values()].filter((row) => row.declaration.unknown > 0);
    expect(strangers.map((row) => row.declaration)).toEqual([{ unknown: 1, none: 0, declared: 0 }]);
    expect(extensionCounts(strangers[0], SEARCH)).toEqual({ client: 0, server: 1, negotiated: 0 });
    expect([...rows.values()].reduce((sum, row) => sum + row.requests, 0)).toBe(5);

    // The v1 session keeps its initialize: every request of it is declared.
    await pollRequests(collector.url, { 'proxy-gamma@3.0.0': 3 }, 'proxied-v1');
    const gammaRow = (await matrixByClient(collector.url, 'proxied-v1')).get('proxy-gamma@3.0.0');
    expect(gammaRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 3 });
    expect(extensionCounts(gammaRow, SEARCH)).toEqual({ client: 3, server: 3, negotiated: 3 });
    expect(extensionCounts(gammaRow, CORPUS)).toEqual({ client: 3, server: 0, negotiated: 0 });
  });

  it('counts 50 concurrent clients with distinct extension maps exactly', async () => {
    const service = 'proxied-fifty';
    const { proxy } = await proxied('v2-http.mjs', service);
    const clients = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const client = new Client(
          { name: `fifty-${i}`, version: '1.0.0' },
          { capabilities: { extensions: { [`com.example/only-${i}`]: {}, ...(i % 2 === 0 && { [TASKS]: {} }) } }, versionNegotiation: { mode: 'auto' } },
        );
        await client.connect(new StreamableHTTPClientTransport(proxy.url));
        await Promise.all([
          client.callTool({ name: 'echo', arguments: { text: `${i}` } }),
          client.callTool({ name: 'echo', arguments: { text: 'again' } }),
          client.listTools(),
        ]);
        await client.close();
        return client;
      }),
    );
    expect(clients).toHaveLength(50);
    await pollRequests(collector.url, Object.fromEntries(clients.map((_, i) => [`fifty-${i}@1.0.0`, 4])), service);
    const rows = await matrixByClient(collector.url, service);
    for (let i = 0; i < 50; i++) {
      const row = rows.get(`fifty-${i}@1.0.0`);
      expect(row?.declaration).toEqual({ unknown: 0, none: 0, declared: 4 });
      expect(extensionCounts(row, `com.example/only-${i}`)).toEqual({ client: 4, server: 0, negotiated: 0 });
      expect(extensionCounts(row, TASKS)).toEqual(i % 2 === 0 ? { client: 4, server: 4, negotiated: 4 } : { client: 0, server: 4, negotiated: 0 });
    }
    expect(rows.size).toBe(50);
  }, 180_000);

  it('passes JSON, SSE (streamed as it comes) and gzip answers and every header unchanged, and counts them', async () => {
    const service = 'proxied-corpus';
    const { upstream, proxy } = await proxied('corpus-http.mjs', service);
    const name = 'raw-proxy';
    const requests = [
      { jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: envelope(name, { [TASKS]: {} }) } },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'gzip', arguments: {}, _meta: envelope(name, { [TASKS]: {} }) } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'refuse', arguments: {}, _meta: envelope(name, {}) } },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'auth', arguments: {}, _meta: envelope(name, { [CORPUS]: { level: 1 } }) } },
    ];
    const headers = { ...MODERN_HEADERS, authorization: 'Bearer secret-token', 'x-custom': 'kept' };
    for (const request of requests) {
      const body = JSON.stringify(request);
      const direct = await post(upstream.url, body, headers);
      const through = await post(proxy.url, body, headers);
      expect(comparable(through)).toEqual(comparable(direct));
      if (request.params.name === 'gzip') expect(gunzipSync(through.body).toString('utf8')).toContain('"id":1');
      if (request.params.name === 'auth') expect(through.body.toString('utf8')).toContain('Bearer secret-token');
    }
    // SSE: the first event reaches the client while the upstream still holds the rest back.
    let firstEvent = '';
    const streamed = post(
      proxy.url,
      JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'stream', arguments: {}, _meta: envelope(name, { [TASKS]: {} }) } }),
      headers,
      (chunk) => {
        firstEvent = chunk.toString('utf8');
        void post(new URL('/release', upstream.url), '', {});
      },
    );
    const answer = await streamed;
    expect(firstEvent).toContain('notifications/progress');
    expect(firstEvent).not.toContain('streamed');
    expect(answer.headers['mcp-session-id']).toBe('corpus-session');
    expect(answer.body.toString('utf8')).toMatch(
      /^event: message\nid: 1\ndata: .*progress.*\n\n: a comment\n\nevent: message\nid: 2\ndata: .*streamed ✓.*\n\n$/s,
    );

    await pollRequests(collector.url, { 'raw-proxy@1.0.0': 5 }, service);
    const row = (await matrixByClient(collector.url, service)).get('raw-proxy@1.0.0');
    // The refused call declared an empty map: none.
    expect(row?.declaration).toEqual({ unknown: 0, none: 1, declared: 4 });
    expect(extensionCounts(row, TASKS)).toEqual({ client: 3, server: 5, negotiated: 3 });
    expect(extensionCounts(row, CORPUS)).toEqual({ client: 1, server: 5, negotiated: 1 });
  });

  it('answers 502 while the upstream is down and counts only what the upstream saw', async () => {
    const service = 'proxied-outage';
    const { upstream, proxy } = await proxied('corpus-http.mjs', service);
    const call = (id: number) =>
      JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'auth', arguments: {}, _meta: envelope('outage-client', {}) } });
    expect((await post(proxy.url, call(1), MODERN_HEADERS)).status).toBe(200);
    await upstream.stop();
    for (let id = 2; id <= 4; id++) {
      const answer = await post(proxy.url, call(id), MODERN_HEADERS);
      expect(answer.status).toBe(502);
      expect(answer.body.toString('utf8')).toContain('unreachable');
    }
    // The proxy exports its last counts when it stops.
    await proxy.stop();
    await pollRequests(collector.url, { 'outage-client@1.0.0': 1 }, service);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect((await matrixByClient(collector.url, service)).get('outage-client@1.0.0')?.requests).toBe(1);
  });

  it('stays up and bounded with 2000 idle connections, malformed bodies and clients leaving mid-stream', async () => {
    const { upstream, proxy } = await proxied('corpus-http.mjs', 'proxied-abuse');
    const before = await peakRss(proxy.child.pid!);
    const sockets: Socket[] = [];
    for (let i = 0; i < 2000; i++) {
      const socket = connect(Number(proxy.url.port), '127.0.0.1');
      socket.on('error', () => {});
      sockets.push(socket);
      if (i % 200 === 199) await once(socket, 'connect');
    }
    // A malformed body passes to the upstream, and its 400 back, unchanged.
    const malformed = await post(proxy.url, '{"jsonrpc":"2.0", nope', MODERN_HEADERS);
    expect(malformed.status).toBe(400);
    expect(malformed.body.toString('utf8')).toContain('-32700');
    // A client that leaves in the middle of an SSE answer.
    await new Promise<void>((resolve) => {
      const request = http.request(proxy.url, { method: 'POST', headers: MODERN_HEADERS, agent: false }, (response) => {
        response.once('data', () => {
          request.destroy();
          resolve();
        });
      });
      request.end(JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'stream', arguments: {}, _meta: envelope('leaver', {}) } }));
    });
    await post(new URL('/release', upstream.url), '', {});
    const during = await peakRss(proxy.child.pid!);
    const ok = await post(
      proxy.url,
      JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'tools/call', params: { name: 'auth', arguments: {}, _meta: envelope('after-abuse', {}) } }),
      MODERN_HEADERS,
    );
    expect(ok.status).toBe(200);
    for (const socket of sockets) socket.destroy();
    expect(proxy.child.exitCode).toBeNull();
    // 2000 idle connections cost the proxy a few KB each, not a buffer each.
    expect(during - before).toBeLessThan(100 * 1024 * 1024);
  });

  it('refuses bad arguments with a clear message', async () => {
    const port = await freePort();
    const { spawnSync } = await import('node:child_process');
    const result = spawnSync(process.execPath, ['dist/bin/extscope.js', 'proxy', '--listen', `127.0.0.1:${port}`], { encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('--upstream');
    expect(result.stdout).toBe('');
  });
});
