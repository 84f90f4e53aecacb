import { type Server as HttpServer, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CAPS, TASKS, eventually, instrumentation, total, v2 } from '../harness.js';

const require = createRequire(import.meta.url);
const node = require('@modelcontextprotocol/node') as typeof import('@modelcontextprotocol/node');

const servers: HttpServer[] = [];
afterAll(async () => {
  instrumentation.disable();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
});

const MAX_BODY = 2048;

function handler() {
  return v2.createMcpHandler(
    () => {
      const server = new v2.McpServer({ name: 'entry-answers', version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {} } } });
      server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
      return server;
    },
    { maxRequestBodySize: MAX_BODY },
  );
}

const envelope = (client: string, revision = '2026-07-28') => ({
  'io.modelcontextprotocol/protocolVersion': revision,
  'io.modelcontextprotocol/clientInfo': { name: client, version: '1.0.0' },
  [CAPS]: { extensions: { [TASKS]: {} } },
});

interface Case {
  /** Also the client name the request declares. */
  name: string;
  status: number;
  headers: Record<string, string>;
  body: (client: string) => string;
  /** Sent as a stream: no Content-Length, so the entry finds the size while reading. */
  streamed?: boolean;
}

const MODERN_HEADERS = { 'content-type': 'application/json', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' };
const call = (client: string, text = 'hi') =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text }, _meta: envelope(client) } });
const CASES: Case[] = [
  { name: 'reaches-an-instance', status: 200, headers: MODERN_HEADERS, body: (client) => call(client) },
  {
    name: 'unsupported-revision',
    status: 400,
    headers: { 'content-type': 'application/json', 'mcp-protocol-version': '2099-01-01' },
    body: (client) => JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope(client, '2099-01-01') } }),
  },
  { name: 'unsupported-media-type', status: 415, headers: { ...MODERN_HEADERS, 'content-type': 'text/plain' }, body: (client) => call(client) },
  { name: 'too-large-by-length', status: 413, headers: MODERN_HEADERS, body: (client) => call(client, 'x'.repeat(MAX_BODY * 3)) },
  { name: 'too-large-while-read', status: 413, headers: MODERN_HEADERS, body: (client) => call(client, 'x'.repeat(MAX_BODY * 3)), streamed: true },
];

function streamOf(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + 500));
      at += 500;
    },
  });
}

function init(test: Case, client: string): RequestInit {
  const body = test.body(client);
  return {
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream', ...test.headers },
    ...(test.streamed ? { body: streamOf(body), duplex: 'half' } : { body }),
  } as RequestInit;
}

async function listen(): Promise<string> {
  const server = createServer(node.toNodeHandler(handler()));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

describe("createMcpHandler's own answers are requests too: each counted once, under the client its body names", () => {
  const runtimes = {
    // @hono/node-server's requests, read from the socket.
    'behind @modelcontextprotocol/node, over loopback HTTP': async () => {
      const url = await listen();
      return (request: RequestInit) => fetch(url, request);
    },
    // Fetch API requests handed to the handler directly, as a fetch-native runtime does.
    'handler.fetch with a Fetch API Request': async () => {
      const direct = handler();
      return (request: RequestInit) => direct.fetch(new Request('http://127.0.0.1/mcp', request));
    },
  };
  for (const [runtime, start] of Object.entries(runtimes)) {
    it(`${runtime}: 200, unsupported revision, 415, 413 on Content-Length, 413 while reading`, async () => {
      const send = await start();
      const codes = new Map<string, string>();
      for (const test of CASES) {
        const client = `${test.name} ${runtime}`;
        const response = await send(init(test, client));
        expect(response.status, test.name).toBe(test.status);
        const answer = (await response.json()) as { error?: { code: number } };
        if (test.status !== 200) codes.set(client, String(answer.error?.code));
      }
      for (const test of CASES) {
        const client = `${test.name} ${runtime}`;
        const counted = await eventually(
          () => total('extscope.requests', { 'extscope.client.name': client, 'mcp.method.name': test.status === 400 ? 'tools/list' : 'tools/call' }),
          (count) => count >= 1,
        );
        expect(counted, test.name).toBe(1);
        if (test.status !== 200)
          expect(await total('extscope.requests', { 'extscope.client.name': client, 'rpc.response.status_code': codes.get(client)! }), test.name).toBe(1);
        expect(
          await total('extscope.extension.requests', {
            'extscope.client.name': client,
            'extscope.extension.id': TASKS,
            'extscope.extension.client_declared': true,
          }),
          test.name,
        ).toBe(1);
      }
    });
  }
});
