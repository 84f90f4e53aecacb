import { randomUUID } from 'node:crypto';
import { type Server as HttpServer, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { REPLAY, TASKS, eventually, instrumentation, spansOf, total, v1client, v1mcp, v1memory, v2 } from './harness.js';

const require = createRequire(import.meta.url);
const node = require('@modelcontextprotocol/node') as typeof import('@modelcontextprotocol/node');
const v1http = require('@modelcontextprotocol/sdk/client/streamableHttp.js') as typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js');

const servers: HttpServer[] = [];
afterAll(async () => {
  instrumentation.disable();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<URL> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
}

function echoServer(name: string) {
  const server = new v2.McpServer({ name, version: '2.0.0' }, { capabilities: { extensions: { [TASKS]: {} } } });
  server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return server;
}

function legacyClient(name: string) {
  return new v1client.Client({ name, version: '0.9.0' }, { capabilities: { extensions: { [TASKS]: {}, [REPLAY]: { maxAttempts: 3 } } } as never });
}

const legacyCall = { 'mcp.method.name': 'tools/call', 'extscope.era': 'legacy' };

describe('2025 era: capabilities declared once, in initialize', () => {
  it('a v2 server with a v1 client: later requests carry the initialize declaration', async () => {
    const server = echoServer('v2-legacy');
    const [clientSide, serverSide] = v2.InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = legacyClient('v1-client-on-v2');
    await client.connect(clientSide as never);
    await client.callTool({ name: 'echo', arguments: { text: 'a' } });
    await client.callTool({ name: 'echo', arguments: { text: 'b' } });
    await client.close();

    const spans = await eventually(
      () => spansOf('v1-client-on-v2'),
      (found) => found.length === 3,
    );
    const init = spans.find((span) => span.name === 'initialize');
    expect(init?.attributes['extscope.client.declaration']).toBe('declared');
    expect(init?.attributes['extscope.client.extensions']).toEqual([TASKS, REPLAY]);
    const calls = spans.filter((span) => span.name === 'tools/call echo');
    expect(calls).toHaveLength(2);
    for (const call of calls) {
      expect(call.attributes['extscope.era']).toBe('legacy');
      expect(call.attributes['extscope.client.declaration']).toBe('declared');
      expect(call.attributes['extscope.negotiated.extensions']).toEqual([TASKS]);
      expect(call.attributes['mcp.protocol.version']).toBe(init?.attributes['mcp.protocol.version']);
    }
    expect(init?.attributes['mcp.protocol.version']).toMatch(/^2025-/);
    expect(await total('extscope.requests', { ...legacyCall, 'extscope.client.name': 'v1-client-on-v2', 'extscope.client.declaration': 'declared' })).toBe(2);
    expect(
      await total('extscope.extension.requests', {
        ...legacyCall,
        'extscope.client.name': 'v1-client-on-v2',
        'extscope.extension.id': REPLAY,
        'extscope.extension.negotiated': false,
      }),
    ).toBe(2);
  });

  it('a v1 server with a v1 client: every request carries the initialize declaration and the server’s ids', async () => {
    const server = new v1mcp.McpServer({ name: 'v1-server', version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {} } } as never });
    server.registerTool('echo', { inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text' as const, text }] }));
    const [clientSide, serverSide] = v1memory.InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = legacyClient('v1-client-on-v1');
    await client.connect(clientSide);
    await client.callTool({ name: 'echo', arguments: { text: 'a' } });
    await client.listTools();
    await client.close();

    const spans = await eventually(
      () => spansOf('v1-client-on-v1'),
      (found) => found.length === 3,
    );
    expect(spans.map((span) => span.name).sort()).toEqual(['initialize', 'tools/call echo', 'tools/list']);
    for (const span of spans) {
      expect(span.attributes['extscope.client.declaration']).toBe('declared');
      expect(span.attributes['extscope.server.extensions']).toEqual([TASKS]);
    }
    expect(await total('extscope.requests', { 'extscope.client.name': 'v1-client-on-v1', 'extscope.server.name': 'v1-server' })).toBe(3);
  });

  it('a stateful session over the Node streamable HTTP transport (accessor-forwarding onmessage)', async () => {
    const sessions = new Map<string, InstanceType<typeof node.NodeStreamableHTTPServerTransport>>();
    const url = await listen(async (req, res) => {
      const sessionId = req.headers['mcp-session-id'];
      let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
      if (transport === undefined) {
        transport = new node.NodeStreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, transport!);
          },
        });
        await echoServer('session-server').connect(transport);
      }
      await transport.handleRequest(req, res);
    });
    const client = legacyClient('session-client');
    const transport = new v1http.StreamableHTTPClientTransport(url);
    await client.connect(transport);
    const reply = await client.callTool({ name: 'echo', arguments: { text: 'over http' } });
    expect(reply.content).toEqual([{ type: 'text', text: 'over http' }]);
    const sessionId = transport.sessionId;
    await client.close();

    const spans = await eventually(
      () => spansOf('session-client'),
      (found) => found.length === 2,
    );
    const call = spans.find((span) => span.name === 'tools/call echo');
    expect(call?.attributes['extscope.client.declaration']).toBe('declared');
    expect(call?.attributes['mcp.session.id']).toBe(sessionId);
    expect(call?.attributes['extscope.negotiated.extensions']).toEqual([TASKS]);
  });

  it('stateless legacy requests through createMcpHandler are unknown: their instance never saw initialize', async () => {
    let instances = 0;
    const handler = v2.createMcpHandler(() => {
      instances++;
      return echoServer('per-request-server');
    });
    const url = await listen(node.toNodeHandler(handler));
    const client = legacyClient('stateless-client');
    await client.connect(new v1http.StreamableHTTPClientTransport(url));
    await client.callTool({ name: 'echo', arguments: { text: 'x' } });
    await client.close();

    const spans = await eventually(
      () => spansOf('stateless-client'),
      (found) => found.length >= 1,
    );
    expect(spans.map((span) => span.name)).toEqual(['initialize']);
    expect(spans[0]?.attributes['extscope.client.declaration']).toBe('declared');
    // The tools/call carries no clientInfo either: it is attributed to no client, with an unknown declaration.
    const unknownCalls = await eventually(
      () => total('extscope.requests', { ...legacyCall, 'extscope.server.name': 'per-request-server', 'extscope.client.declaration': 'unknown' }),
      (count) => count === 1,
    );
    expect(unknownCalls).toBe(1);
    expect(instances).toBeGreaterThanOrEqual(2);
  });

  it('the same handler serves 2026-07-28 clients per request, declared from each envelope', async () => {
    const handler = v2.createMcpHandler(() => echoServer('per-request-server-2026'));
    const url = await listen(node.toNodeHandler(handler));
    const client = new Client(
      { name: 'modern-http-client', version: '5.0.0' },
      { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: 'auto' } },
    );
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    await client.connect(new StreamableHTTPClientTransport(url));
    await client.callTool({ name: 'echo', arguments: { text: 'x' } });
    await client.close();
    const spans = await eventually(
      () => spansOf('modern-http-client'),
      (found) => found.length === 2,
    );
    const call = spans.find((span) => span.name === 'tools/call echo');
    expect(call?.attributes['extscope.era']).toBe('modern');
    expect(call?.attributes['extscope.negotiated.extensions']).toEqual([TASKS]);
    expect(call?.attributes['jsonrpc.request.id']).toBe('0');
  });
});
