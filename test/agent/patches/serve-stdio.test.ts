import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EntryExchanges } from '../../../agent/observe/entry-exchange.js';
import { observingServeStdio } from '../../../agent/patches/serve-stdio.js';
import { ServerConnections } from '../../../agent/patches/server-connect.js';
import { CAPS, REPLAY, TASKS, eventually, extensionCount, instrumentation, requestCount, serverWith, total, v2, v2stdio } from '../harness.js';
import { pipelineWithReader } from '../helpers.js';

afterAll(() => instrumentation.disable());

describe('answers serveStdio gives itself, before any server instance', () => {
  /** Raw JSON-RPC on the client end of an in-memory wire, collecting whatever comes back. */
  async function rawWire(options: Record<string, unknown>) {
    const [clientSide, serverSide] = v2.InMemoryTransport.createLinkedPair();
    const received: Record<string, unknown>[] = [];
    clientSide.onmessage = (message) => {
      received.push(message as Record<string, unknown>);
    };
    await clientSide.start();
    const handle = v2stdio.serveStdio(() => serverWith({ [TASKS]: {} }, 'entry-server'), { transport: serverSide, ...options });
    return { clientSide, received, close: () => handle.close() };
  }
  const envelope = (name: string) => ({
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name, version: '1' },
    [CAPS]: { extensions: { [TASKS]: {} } },
  });

  it('a 2025-era initialize on a modern-only connection is refused by the entry, and recorded', async () => {
    const { clientSide, received, close } = await rawWire({ legacy: 'reject' });
    await clientSide.send({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: { extensions: { [REPLAY]: {} } }, clientInfo: { name: 'refused-legacy', version: '1' } },
    });
    await eventually(
      () => received.length,
      (n) => n === 1,
    );
    await close();
    expect(received[0]).toMatchObject({ id: 0, error: { code: expect.any(Number) } });
    const code = String((received[0]!['error'] as { code: number }).code);
    expect(
      await requestCount('refused-legacy', { 'mcp.method.name': 'initialize', 'extscope.server.declaration': 'unknown', 'rpc.response.status_code': code }),
    ).toBe(1);
    expect(await extensionCount('refused-legacy', REPLAY, { 'extscope.extension.client_declared': true, 'extscope.extension.server_declared': false })).toBe(1);
  });

  it('subscriptions/listen is acknowledged by the entry with a notification, and recorded once (its closing result is not counted again)', async () => {
    const unknownBefore = await total('extscope.requests', { 'mcp.method.name': '(unknown)' });
    const { clientSide, received, close } = await rawWire({});
    await clientSide.send({ jsonrpc: '2.0', id: 'probe', method: 'server/discover', params: { _meta: envelope('listener') } });
    await eventually(
      () => received.length,
      (n) => n === 1,
    );
    await clientSide.send({
      jsonrpc: '2.0',
      id: 'listen-1',
      method: 'subscriptions/listen',
      params: { notifications: { toolsListChanged: true }, _meta: envelope('listener') },
    });
    await eventually(
      () => received.length,
      (n) => n === 2,
    );
    await close();
    // Closing the connection ends the subscription with the listen request's (empty) result.
    await eventually(
      () => received.length,
      (n) => n === 3,
    );
    expect(received[2]).toMatchObject({ id: 'listen-1', result: { resultType: 'complete' } });
    expect(await total('extscope.requests', { 'mcp.method.name': '(unknown)' })).toBe(unknownBefore);
    expect(received[1]).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' } },
    });
    expect(
      await requestCount('listener', { 'mcp.method.name': 'subscriptions/listen', 'extscope.outcome': 'complete', 'extscope.server.declaration': 'unknown' }),
    ).toBe(1);
    // The discover probe reached the pinned instance: recorded there, once, with the server's declaration.
    expect(await requestCount('listener', { 'mcp.method.name': 'server/discover' })).toBe(1);
    expect(await requestCount('listener', { 'mcp.method.name': 'server/discover', 'extscope.server.declaration': 'declared' })).toBe(1);
  });

  it('an opening request the entry refuses (unsupported revision, malformed envelope) is recorded with no server', async () => {
    for (const [name, meta] of [
      ['future-client', { ...envelope('future-client'), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }],
      ['malformed-client', { ...envelope('malformed-client'), [CAPS]: 'not an object' }],
    ] as const) {
      const { clientSide, received, close } = await rawWire({});
      await clientSide.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } });
      await eventually(
        () => received.length,
        (n) => n === 1,
      );
      await close();
      const code = (received[0]!['error'] as { code?: number } | undefined)?.code;
      expect(code, name).toBeLessThan(0);
      expect(
        await requestCount(name, { 'mcp.method.name': 'tools/list', 'extscope.server.declaration': 'unknown', 'rpc.response.status_code': String(code) }),
        name,
      ).toBe(1);
      expect(await requestCount(name), name).toBe(1);
    }
  });

  it('a 2025-era initialize after the connection was pinned to 2026-07-28 is refused by the entry; what the instance answered is counted once, by the instance', async () => {
    const { clientSide, received, close } = await rawWire({});
    await clientSide.send({ jsonrpc: '2.0', id: 'probe', method: 'server/discover', params: { _meta: envelope('pinned-then-legacy') } });
    await clientSide.send({ jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: envelope('pinned-then-legacy') } });
    await eventually(
      () => received.length,
      (n) => n === 2,
    );
    await clientSide.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'pinned-then-legacy', version: '1' } },
    });
    await eventually(
      () => received.length,
      (n) => n === 3,
    );
    await close();
    expect(received.map((message) => message['id']).sort()).toEqual([1, 2, 'probe']);
    expect(received.find((message) => message['id'] === 2)).toMatchObject({ error: { code: expect.any(Number) } });
    expect(
      await requestCount('pinned-then-legacy', { 'mcp.method.name': 'initialize', 'extscope.server.declaration': 'unknown', 'extscope.outcome': 'error' }),
    ).toBe(1);
    for (const method of ['server/discover', 'ping']) {
      expect(await requestCount('pinned-then-legacy', { 'mcp.method.name': method }), method).toBe(1);
      expect(
        await requestCount('pinned-then-legacy', {
          'mcp.method.name': method,
          'extscope.server.declaration': 'declared',
          'extscope.server.name': 'entry-server',
        }),
        method,
      ).toBe(1);
    }
  });
});

describe('requests the entry passes on to the pinned instance', () => {
  it('are recorded once, by the instance, even when its delivery fails inside the entry: then the entry answers, and records that', async () => {
    const [clientSide, serverSide] = v2.InMemoryTransport.createLinkedPair();
    const received: Record<string, unknown>[] = [];
    clientSide.onmessage = (message) => {
      received.push(message as Record<string, unknown>);
    };
    await clientSide.start();
    const handle = v2stdio.serveStdio(
      () => {
        const server = serverWith({ [TASKS]: {} }, 'fragile-server');
        server.registerTool('echo', { inputSchema: z.object({}) }, async () => ({ content: [] }));
        // The app wraps the transport it is given: its wrapper throws for one method, before the SDK (and extscope) see it.
        const connect = server.connect.bind(server);
        server.connect = async (transport) => {
          await connect(transport);
          const deliver = transport.onmessage!;
          transport.onmessage = (message, extra) => {
            if ((message as { method?: string }).method === 'com.example/boom') throw new Error('delivery failed');
            deliver(message, extra);
          };
        };
        return server;
      },
      { transport: serverSide },
    );
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'fragile-client', version: '1' },
      [CAPS]: {},
    };
    await clientSide.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } });
    await eventually(
      () => received.length,
      (n) => n === 1,
    );
    await clientSide.send({ jsonrpc: '2.0', id: 2, method: 'com.example/boom', params: { _meta: envelope } });
    await eventually(
      () => received.length,
      (n) => n === 2,
    );
    await clientSide.send({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: envelope } });
    await eventually(
      () => received.length,
      (n) => n === 3,
    );
    await handle.close();
    expect(received.map((message) => [message['id'], 'error' in message ? (message['error'] as { code: number }).code : 'result'])).toEqual([
      [1, 'result'],
      [2, -32603],
      [3, 'result'],
    ]);
    expect(await requestCount('fragile-client')).toBe(3);
    expect(
      await requestCount('fragile-client', {
        'mcp.method.name': 'tools/list',
        'extscope.server.declaration': 'declared',
        'extscope.server.name': 'fragile-server',
      }),
    ).toBe(2);
    expect(
      await requestCount('fragile-client', {
        'mcp.method.name': 'com.example/boom',
        'extscope.server.declaration': 'unknown',
        'rpc.response.status_code': '-32603',
      }),
    ).toBe(1);
  });
});

describe('the stdio entry observer, over a stand-in for serveStdio', () => {
  type Callback = ((message: unknown) => void) | undefined;
  const envelope = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'stand-in-client', version: '1' },
    [CAPS]: {},
  };

  /** What serveStdio does, reduced: it passes requests on to one pinned instance, except those it answers or holds. */
  function standIn() {
    const { pipeline, metrics } = pipelineWithReader();
    const exchanges = new EntryExchanges();
    const servers = new ServerConnections(pipeline, exchanges, undefined);
    const sent: unknown[] = [];
    const wire = {
      onmessage: undefined as Callback,
      onclose: undefined as (() => void) | undefined,
      start: async () => {},
      send: async (message: unknown) => void sent.push(message),
    };
    const serveStdio = (factory: unknown, options?: Record<string, unknown>) => {
      const transport = options!['transport'] as typeof wire;
      const channel = { onmessage: undefined as Callback, start: async () => {}, send: (message: unknown) => transport.send(message) };
      servers.attach((factory as () => object)(), channel);
      channel.onmessage = (message) => {
        const { id } = message as { id?: unknown };
        if (id !== undefined) void channel.send({ jsonrpc: '2.0', id, result: {} });
      };
      void channel.start();
      transport.onmessage = (message) => {
        const { id, method } = message as { id?: unknown; method?: string };
        if (method === 'entry/refuse') void transport.send({ jsonrpc: '2.0', id, error: { code: -32600, message: 'refused' } });
        else if (method !== 'entry/hold') channel.onmessage?.(message);
      };
      transport.onclose = () => {};
      void transport.start();
      return {};
    };
    const factory = () => ({ getCapabilities: () => ({ extensions: { [TASKS]: {} } }), _serverInfo: { name: 'pinned', version: '1' } });
    observingServeStdio(serveStdio, undefined, pipeline, exchanges)(factory, { transport: wire });
    const client = (message: Record<string, unknown>) => wire.onmessage!({ jsonrpc: '2.0', ...message });
    return { client, wire, sent, metrics };
  }

  it('a request delivered to the pinned instance is recorded once, by its connection; one the entry answers, by the entry', async () => {
    const { client, sent, metrics } = standIn();
    client({ id: 1, method: 'tools/list', params: { _meta: envelope } });
    client({ id: 2, method: 'entry/refuse', params: { _meta: envelope } });
    expect(sent).toHaveLength(2);
    expect(await metrics.sum('extscope.requests')).toBe(2);
    expect(
      await metrics.sum('extscope.requests', { 'mcp.method.name': 'tools/list', 'extscope.server.name': 'pinned', 'extscope.server.declaration': 'declared' }),
    ).toBe(1);
    expect(
      await metrics.sum('extscope.requests', {
        'mcp.method.name': 'entry/refuse',
        'extscope.server.declaration': 'unknown',
        'rpc.response.status_code': '-32600',
        'extscope.client.name': 'stand-in-client',
      }),
    ).toBe(1);
  });

  it('an entry answer to a request it does not hold (here: a second answer) is still counted, as far as the answer tells', async () => {
    const { client, wire, metrics } = standIn();
    client({ id: 2, method: 'entry/refuse', params: { _meta: envelope } });
    await wire.send({ jsonrpc: '2.0', id: 2, error: { code: -32600, message: 'refused again' } });
    expect(await metrics.sum('extscope.requests')).toBe(2);
    expect(
      await metrics.sum('extscope.requests', {
        'mcp.method.name': '(unknown)',
        'extscope.server.declaration': 'unknown',
        'rpc.response.status_code': '-32600',
      }),
    ).toBe(1);
  });

  it('a request the client cancels before any answer, or one still held when the wire closes, is not recorded', async () => {
    const { client, wire, metrics } = standIn();
    client({ id: 3, method: 'entry/hold', params: { _meta: envelope } });
    client({ method: 'notifications/cancelled', params: { requestId: 3 } });
    client({ id: 4, method: 'entry/hold', params: { _meta: envelope } });
    wire.onclose!();
    expect(await metrics.sum('extscope.requests')).toBe(0);
  });
});

describe('the factory serveStdio is given', () => {
  it('returns what the app’s factory returns (a server or its promise) and throws what it throws; a promised server still reports to the entry', async () => {
    const { pipeline, metrics } = pipelineWithReader();
    const exchanges = new EntryExchanges();
    const servers = new ServerConnections(pipeline, exchanges, undefined);
    const product = { getCapabilities: () => ({}), _serverInfo: { name: 'promised', version: '1' } };
    const seen: unknown[] = [];
    const wire = { onmessage: undefined as ((message: unknown) => void) | undefined, start: async () => {}, send: async (_message: unknown) => {} };
    const serveStdio = async (factory: unknown, options?: Record<string, unknown>) => {
      const made = (factory as (ctx: unknown) => unknown)({ era: 'modern' });
      seen.push(made);
      const server = (await made) as object;
      const channel = {
        onmessage: undefined as ((message: unknown) => void) | undefined,
        start: async () => {},
        send: (message: unknown) => wire.send(message),
      };
      servers.attach(server, channel);
      channel.onmessage = (message) => void channel.send({ jsonrpc: '2.0', id: (message as { id: unknown }).id, result: {} });
      await channel.start();
      const transport = options!['transport'] as typeof wire;
      transport.onmessage = (message) => channel.onmessage?.(message);
      await transport.start();
    };
    const patched = observingServeStdio(serveStdio as never, undefined, pipeline, exchanges);
    await patched(
      async (ctx: unknown) => {
        expect(ctx).toEqual({ era: 'modern' });
        return product;
      },
      { transport: wire },
    );
    expect(await (seen[0] as Promise<unknown>)).toBe(product);
    wire.onmessage!({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    expect(await metrics.sum('extscope.requests')).toBe(1);
    expect(await metrics.sum('extscope.requests', { 'extscope.server.name': 'promised' })).toBe(1);

    const failing = observingServeStdio(((factory: () => unknown) => factory()) as never, undefined, pipeline, exchanges);
    const boom = new Error('factory failed');
    expect(() =>
      failing(
        () => {
          throw boom;
        },
        { transport: { onmessage: undefined, start: async () => {}, send: async () => {} } },
      ),
    ).toThrow(boom);
  });
});
