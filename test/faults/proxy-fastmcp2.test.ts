import { execFileSync } from 'node:child_process';
import http from 'node:http';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type OtlpSink, startOtlpSink } from '../support/otlp-sink.js';
import { ROOT, agentEnv, fixture } from '../support/processes.js';
import { type ListeningChild, startListening, startProxyProcess } from '../support/servers.js';

const PYTHON_DIR = fixture('python');
// Python servers take seconds to import on a busy machine.
const SLOW = 180_000;

let python: string;
let sink: OtlpSink;
beforeAll(async () => {
  // Installs the pinned SDKs once into ~/.cache/extscope (FastMCP 2.x among them); fails the suite when it cannot.
  const installed = execFileSync('bash', [join(ROOT, 'scripts/install-other-sdks.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const venv = /^fastmcp2=(.+)$/m.exec(installed)?.[1];
  if (venv === undefined) throw new Error(`install-other-sdks.sh printed no fastmcp2= line: ${installed}`);
  python = join(venv, 'bin/python');
  sink = await startOtlpSink();
}, 20 * 60_000);
afterAll(async () => {
  await sink?.close();
});
const children: ListeningChild[] = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map((child) => child.stop()));
});

/** A FastMCP 2.14.7 server (`module` of test/fixtures/python) and `extscope proxy` in front of it. */
async function proxiedFastMcp2(module: string, service: string): Promise<{ upstream: ListeningChild; proxy: ListeningChild }> {
  const upstream = await startListening(python, [join(PYTHON_DIR, 'serve.py'), module, 'http'], agentEnv(sink.url), '/mcp', SLOW);
  children.push(upstream);
  const proxy = await startProxyProcess(upstream.url, agentEnv(sink.url, { OTEL_SERVICE_NAME: service }));
  children.push(proxy);
  return { upstream, proxy };
}

const requests = (match: Record<string, unknown>) => sink.sum('extscope.requests', match);

describe('extscope proxy in front of FastMCP 2.x', () => {
  it(
    'the official v1 and v2 clients reach it at /mcp/ through the proxy (the 307 names the proxy), counted exactly, the redirects not counted',
    async () => {
      const service = 'fastmcp2-redirect';
      const { upstream, proxy } = await proxiedFastMcp2('fastmcp2_server', service);
      // FastMCP 2.x itself sends /mcp/ to /mcp with its own absolute URL; the proxy's answer names the proxy.
      const trailing = (base: URL) =>
        fetch(new URL('/mcp/', base), { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/json' }, body: '{}' });
      const direct = await trailing(upstream.url);
      expect({ status: direct.status, location: direct.headers.get('location') }).toEqual({ status: 307, location: `${upstream.url.origin}/mcp` });
      const through = await trailing(proxy.url);
      expect({ status: through.status, location: through.headers.get('location') }).toEqual({ status: 307, location: `${proxy.url.origin}/mcp` });

      const at = new URL('/mcp/', proxy.url);
      const v1 = new V1Client({ name: 'fm2-v1', version: '1.0.0' }, { capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } });
      await v1.connect(new V1StreamableHTTPClientTransport(at));
      await v1.listTools();
      expect(await v1.callTool({ name: 'echo', arguments: { text: 'one' } })).toMatchObject({ content: [{ type: 'text', text: 'one' }] });
      await v1.close();
      const v2 = new Client({ name: 'fm2-v2', version: '1.0.0' }, { capabilities: { extensions: { 'com.example/fm2': {} } } });
      await v2.connect(new StreamableHTTPClientTransport(at));
      expect(await v2.callTool({ name: 'echo', arguments: { text: 'two' } })).toMatchObject({ content: [{ type: 'text', text: 'two' }] });
      await v2.listTools();
      await v2.close();

      // The proxy exports its last counts as it stops: these are final.
      await proxy.stop();
      await expect.poll(() => requests({ 'extscope.server.name': 'fastmcp2-fixture' }), { timeout: 15_000 }).toBe(6);
      // initialize, a list and a call each, every one declared through its session.
      for (const client of ['fm2-v1', 'fm2-v2']) {
        expect(requests({ 'extscope.client.name': client })).toBe(3);
        expect(requests({ 'extscope.client.name': client, 'extscope.client.declaration': 'declared', 'extscope.outcome': 'complete' })).toBe(3);
      }
      expect(requests({ 'extscope.outcome': 'error' })).toBe(0);
    },
    SLOW,
  );

  it(
    'a tool that never answers: the requests the client gives up on, and those in flight when the proxy stops, are counted cancelled',
    async () => {
      const service = 'fastmcp2-hang';
      // JSON answers: nothing of an answer goes out before the tool returns.
      const { proxy } = await proxiedFastMcp2('fastmcp2_json_server', service);
      const transport = new V1StreamableHTTPClientTransport(proxy.url);
      const client = new V1Client({ name: 'hang-client', version: '1.0.0' }, { capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } });
      await client.connect(transport);
      const sessionId = transport.sessionId!;
      expect(sessionId).toBeTruthy();

      const hang = (id: number) => {
        const request = http.request(proxy.url, {
          method: 'POST',
          agent: false,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-session-id': sessionId,
            'mcp-protocol-version': '2025-06-18',
          },
        });
        let answered = false;
        request.on('response', () => (answered = true));
        request.on('error', () => {});
        request.end(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'hang', arguments: {} } }));
        return { request, answered: () => answered };
      };
      // Ten calls the client gives up on after a while (no answer came).
      const givenUp = Array.from({ length: 10 }, (_, i) => hang(100 + i));
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(givenUp.filter((call) => call.answered())).toEqual([]);
      for (const call of givenUp) call.request.destroy();
      // Five more in flight when the proxy stops.
      const inFlight = Array.from({ length: 5 }, (_, i) => hang(200 + i));
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await proxy.stop();
      expect(inFlight.filter((call) => call.answered())).toEqual([]);

      await expect.poll(() => requests({ 'extscope.client.name': 'hang-client', 'extscope.outcome': 'cancelled' }), { timeout: 15_000 }).toBe(15);
      expect(requests({ 'extscope.client.name': 'hang-client', 'mcp.method.name': 'tools/call' })).toBe(15);
      expect(requests({ 'extscope.client.name': 'hang-client', 'extscope.outcome': 'complete' })).toBe(1);
    },
    SLOW,
  );
});
