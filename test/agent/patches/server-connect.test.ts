import { Client } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { instrumentation, total, v2 } from '../harness.js';

afterAll(() => instrumentation.disable());

function echoServer(name: string) {
  const server = new v2.McpServer({ name, version: '1.0.0' });
  server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return server;
}

async function roundTrip(server: InstanceType<typeof v2.McpServer>, prepare: (transport: object) => void, clientName: string) {
  const [clientSide, serverSide] = v2.InMemoryTransport.createLinkedPair();
  prepare(serverSide);
  await server.connect(serverSide);
  const client = new Client({ name: clientName, version: '1.0.0' });
  await client.connect(clientSide);
  const result = await client.callTool({ name: 'echo', arguments: { text: 'still works' } });
  await client.close();
  return result;
}

const attachErrors = () => total('extscope.agent.errors', { 'extscope.agent.stage': 'attach' });

describe('fail-open: an internal error is caught and counted, and the server behaves as without the agent', () => {
  it('a transport that cannot be observed (non-configurable send) still serves', async () => {
    const before = await attachErrors();
    const result = await roundTrip(
      echoServer('sealed-transport-server'),
      (transport) => {
        const send = (transport as { send: (...args: unknown[]) => unknown }).send.bind(transport);
        Object.defineProperty(transport, 'send', { value: send, configurable: false, writable: false });
      },
      'sealed-client',
    );
    expect(result.content).toEqual([{ type: 'text', text: 'still works' }]);
    expect(await attachErrors()).toBe(before + 1);
    expect(await total('extscope.requests', { 'extscope.client.name': 'sealed-client' })).toBe(0);
  });

  it('a transport that is not extensible still serves, and counts one attach error for its two patched connects', async () => {
    const before = await attachErrors();
    const result = await roundTrip(echoServer('closed-transport-server'), (transport) => Object.preventExtensions(transport), 'closed-transport-client');
    expect(result.content).toEqual([{ type: 'text', text: 'still works' }]);
    // McpServer.connect hands the transport to Server.connect: both patches see it, and only the first tries.
    expect(await attachErrors()).toBe(before + 1);
    expect(await total('extscope.requests', { 'extscope.client.name': 'closed-transport-client' })).toBe(0);
  });

  it('a server whose getCapabilities() throws still serves its tools', async () => {
    const before = await attachErrors();
    const server = echoServer('throwing-capabilities');
    const original = server.server.getCapabilities.bind(server.server);
    let calls = 0;
    // Throws only for the agent's first read at connect; the SDK's own later reads get the real answer.
    server.server.getCapabilities = () => {
      if (calls++ === 0) throw new Error('capabilities unavailable');
      return original();
    };
    const result = await roundTrip(server, () => {}, 'throwing-capabilities-client');
    expect(result.content).toEqual([{ type: 'text', text: 'still works' }]);
    expect(await attachErrors()).toBe(before + 1);
  });

  it('errors thrown by the application still reach the application unchanged', async () => {
    const server = new v2.McpServer({ name: 'throws-on-connect', version: '1.0.0' });
    const [, serverSide] = v2.InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    // Connecting twice is an SDK error; the agent must not swallow or replace it.
    await expect(server.connect(serverSide)).rejects.toThrow(/already connected/i);
  });
});
