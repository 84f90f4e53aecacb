import { Client } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  CAPS,
  REPLAY,
  TASKS,
  barrier,
  eventually,
  instrumentation,
  spanExporter,
  spansOf,
  total,
  v2,
  v2stdio,
} from './harness.js';

type Factory = Parameters<typeof v2stdio.serveStdio>[0];

/** A 2026-07-28 connection: `serveStdio` pins one server instance; the wire is an in-memory pair. */
async function connectModern(factory: Factory, clientName: string, capabilities: Record<string, unknown>) {
  const [clientSide, serverSide] = v2.InMemoryTransport.createLinkedPair();
  const handle = v2stdio.serveStdio(factory, { transport: serverSide });
  const client = new Client({ name: clientName, version: '1.0.0' }, { capabilities, versionNegotiation: { mode: 'auto' } });
  await client.connect(clientSide);
  return {
    client,
    clientSide,
    async close() {
      await client.close();
      await handle.close();
    },
  };
}

function serverWith(extensions: Record<string, Record<string, string | number | boolean>>, name = 'test-server') {
  return new v2.McpServer({ name, version: '3.1.0' }, { capabilities: { extensions, prompts: {} } });
}

const requestCount = (clientName: string, match: Record<string, string> = {}) =>
  total('extscope.requests', { 'extscope.client.name': clientName, ...match });
const extensionCount = (clientName: string, id: string, match: Record<string, string | boolean> = {}) =>
  total('extscope.extension.requests', { 'extscope.client.name': clientName, 'extscope.extension.id': id, ...match });

afterAll(() => instrumentation.disable());

describe('2026-07-28: the declaration belongs to each request alone', () => {
  it('records two concurrent requests on one server instance with their own maps, and a third with no envelope as unknown', async () => {
    const both = barrier(2);
    let instances = 0;
    const factory = () => {
      instances++;
      const server = serverWith({ [TASKS]: {} });
      server.registerTool('wait', { inputSchema: z.object({}) }, async () => {
        await both.arrive();
        return { content: [{ type: 'text', text: 'done' }] };
      });
      return server;
    };
    const { client, clientSide, close } = await connectModern(factory, 'concurrent-client', { extensions: { [TASKS]: {} } });
    const declared = client.callTool({ name: 'wait', arguments: {}, _meta: { [CAPS]: { extensions: { [TASKS]: {} } } } });
    const none = client.callTool({ name: 'wait', arguments: {}, _meta: { [CAPS]: {} } });
    await Promise.all([declared, none]);
    expect(instances).toBe(1);

    // A request without the envelope, written straight onto the same connection.
    await clientSide.send({ jsonrpc: '2.0', id: 'no-envelope', method: 'tools/call', params: { name: 'wait', arguments: {} } });

    const spans = await eventually(
      () => spanExporter.getFinishedSpans().filter((span) => span.name === 'tools/call wait'),
      (found) => found.length === 3,
    );
    await close();
    const byDeclaration = Object.fromEntries(spans.map((span) => [span.attributes['extscope.client.declaration'], span]));
    expect(Object.keys(byDeclaration).sort()).toEqual(['declared', 'none', 'unknown']);
    expect(byDeclaration['declared']?.attributes['extscope.client.extensions']).toEqual([TASKS]);
    expect(byDeclaration['declared']?.attributes['extscope.negotiated.extensions']).toEqual([TASKS]);
    expect(byDeclaration['none']?.attributes['extscope.client.extensions']).toEqual([]);
    expect(byDeclaration['none']?.attributes['extscope.negotiated.extensions']).toEqual([]);
    expect(byDeclaration['unknown']?.attributes['extscope.client.extensions']).toEqual([]);
    // The unenveloped request is refused by the SDK, and recorded as such.
    expect(byDeclaration['unknown']?.attributes['rpc.response.status_code']).toBe('-32602');

    expect(await requestCount('concurrent-client', { 'mcp.method.name': 'tools/call', 'extscope.client.declaration': 'declared' })).toBe(1);
    expect(await requestCount('concurrent-client', { 'mcp.method.name': 'tools/call', 'extscope.client.declaration': 'none' })).toBe(1);
    expect(await total('extscope.requests', { 'mcp.method.name': 'tools/call', 'extscope.client.declaration': 'unknown', 'extscope.server.name': 'test-server', 'rpc.response.status_code': '-32602' })).toBeGreaterThanOrEqual(1);
    expect(await extensionCount('concurrent-client', TASKS, { 'mcp.method.name': 'tools/call', 'extscope.extension.negotiated': true })).toBe(1);
    expect(await extensionCount('concurrent-client', TASKS, { 'mcp.method.name': 'tools/call', 'extscope.extension.client_declared': false, 'extscope.extension.server_declared': true })).toBe(1);
  });

  it('negotiates the intersection; {} settings count as declared; an unknown id is recorded and inert', async () => {
    const factory = () => {
      const server = serverWith({ [TASKS]: {} });
      server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
      return server;
    };
    const extensions = { [TASKS]: {}, [REPLAY]: { maxAttempts: 3 }, 'org.unknown/thing': { x: 1 } };
    const { client, close } = await connectModern(factory, 'intersection-client', { extensions });
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(result.content).toEqual([{ type: 'text', text: 'hi' }]);
    const [span] = await eventually(() => spansOf('intersection-client').filter((s) => s.name === 'tools/call echo'), (s) => s.length === 1);
    await close();
    const attributes = span!.attributes;
    expect(attributes['extscope.client.extensions']).toEqual([TASKS, REPLAY, 'org.unknown/thing']);
    expect(attributes['extscope.server.extensions']).toEqual([TASKS]);
    expect(attributes['extscope.negotiated.extensions']).toEqual([TASKS]);
    const fingerprints = attributes['extscope.client.extension.fingerprints'] as string[];
    expect(fingerprints).toHaveLength(3);
    expect(fingerprints.every((fp) => /^[0-9a-f]{16}$/.test(fp))).toBe(true);
    expect(new Set(fingerprints).size).toBe(3);
    expect(JSON.stringify(attributes)).not.toContain('maxAttempts');

    const call = { 'mcp.method.name': 'tools/call' };
    expect(await extensionCount('intersection-client', TASKS, { ...call, 'extscope.extension.negotiated': true })).toBe(1);
    expect(await extensionCount('intersection-client', REPLAY, { ...call, 'extscope.extension.client_declared': true, 'extscope.extension.server_declared': false, 'extscope.extension.negotiated': false })).toBe(1);
    expect(await extensionCount('intersection-client', 'org.unknown/thing', { ...call, 'extscope.extension.negotiated': false })).toBe(1);
    expect(await requestCount('intersection-client', { ...call, 'extscope.outcome': 'complete', 'extscope.era': 'modern', 'mcp.protocol.version': '2026-07-28' })).toBe(1);
  });
});

describe('outcomes', () => {
  const outcomeServer = () => {
    const server = serverWith({ [TASKS]: {} });
    server.registerTool('ok', { inputSchema: z.object({}) }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
    server.registerTool('fails', { inputSchema: z.object({}) }, async () => {
      throw new Error('tool blew up');
    });
    server.registerTool('asks', { inputSchema: z.object({}) }, async () =>
      v2.inputRequired({ inputRequests: { confirm: v2.inputRequired.elicit({ message: 'sure?', requestedSchema: z.object({ ok: z.boolean() }) }) } }),
    );
    server.registerTool('hangs', { inputSchema: z.object({}) }, async (_args, ctx) => {
      await new Promise<void>((resolve) => ctx.mcpReq.signal.addEventListener('abort', () => resolve(), { once: true }));
      return { content: [] };
    });
    // A task result is only legal on tools/call, prompts/get and resources/read; McpServer validates tool
    // results as content, so a low-level prompts/get handler returns it.
    server.server.setRequestHandler('prompts/get', async () => ({ resultType: 'task', task: { taskId: 't-1', status: 'working' } }) as never);
    server.server.setRequestHandler('com.example/replayable', { params: z.object({}).passthrough() }, async () => {
      throw new v2.MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [REPLAY]: {} } } });
    });
    return server;
  };

  it('classifies complete, tool_error, input_required, task, -32601, -32602, -32021 (with its ids) and cancelled', async () => {
    const { client, close } = await connectModern(outcomeServer, 'outcome-client', { elicitation: {}, extensions: { [TASKS]: {} } });
    await client.callTool({ name: 'ok', arguments: {} });
    const toolError = await client.callTool({ name: 'fails', arguments: {} });
    expect(toolError.isError).toBe(true);
    await expect(client.callTool({ name: 'asks', arguments: {} })).rejects.toThrow();
    await client.request({ method: 'prompts/get', params: { name: 'any' } }, z.any()).catch(() => undefined);
    await expect(client.request({ method: 'com.example/nope', params: {} }, z.any())).rejects.toMatchObject({ code: -32601 });
    await expect(client.callTool({ name: 'no-such-tool', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    await expect(client.request({ method: 'com.example/replayable', params: {} }, z.any())).rejects.toMatchObject({ code: -32021 });
    const abort = new AbortController();
    const hanging = client.callTool({ name: 'hangs', arguments: {} }, { signal: abort.signal });
    await new Promise((resolve) => setTimeout(resolve, 50));
    abort.abort('changed my mind');
    await expect(hanging).rejects.toThrow();

    const outcomes = await eventually(
      () => spansOf('outcome-client').map((span) => `${span.name}:${span.attributes['extscope.outcome']}:${span.attributes['rpc.response.status_code'] ?? ''}`),
      (found) => found.length >= 9,
    );
    await close();
    expect(outcomes.sort()).toEqual(
      [
        'server/discover:complete:',
        'tools/call ok:complete:',
        'tools/call fails:tool_error:',
        'tools/call asks:input_required:',
        'prompts/get any:task:',
        'com.example/nope:error:-32601',
        'tools/call no-such-tool:error:-32602',
        'com.example/replayable:error:-32021',
        'tools/call hangs:cancelled:',
      ].sort(),
    );
    const [toolErrorSpan] = spansOf('outcome-client').filter((span) => span.name === 'tools/call fails');
    expect(toolErrorSpan?.attributes['error.type']).toBe('tool_error');
    expect(toolErrorSpan?.status.code).toBe(2);
    const [required] = spansOf('outcome-client').filter((span) => span.name === 'com.example/replayable');
    expect(required?.attributes['extscope.required.extensions']).toEqual([REPLAY]);
    expect(required?.attributes['error.type']).toBe('-32021');

    for (const [outcome, count] of [['complete', 2], ['tool_error', 1], ['input_required', 1], ['task', 1], ['error', 3], ['cancelled', 1]] as const) {
      expect(await requestCount('outcome-client', { 'extscope.outcome': outcome }), outcome).toBe(count);
    }
    expect(await requestCount('outcome-client', { 'rpc.response.status_code': '-32021' })).toBe(1);
    expect(await extensionCount('outcome-client', REPLAY, { 'extscope.extension.required': true, 'extscope.extension.client_declared': false })).toBe(1);
  });
});

describe('trace context', () => {
  it('continues the client trace carried in params._meta', async () => {
    const factory = () => {
      const server = serverWith({});
      server.registerTool('traced', { inputSchema: z.object({}) }, async () => ({ content: [] }));
      return server;
    };
    const { client, close } = await connectModern(factory, 'traced-client', {});
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentSpanId = '00f067aa0ba902b7';
    await client.callTool({ name: 'traced', arguments: {}, _meta: { traceparent: `00-${traceId}-${parentSpanId}-01` } });
    const [span] = await eventually(() => spansOf('traced-client').filter((s) => s.name === 'tools/call traced'), (s) => s.length === 1);
    await close();
    expect(span?.spanContext().traceId).toBe(traceId);
    expect(span?.parentSpanContext?.spanId).toBe(parentSpanId);
    expect(span?.kind).toBe(1); // SERVER
    expect(span?.attributes['gen_ai.tool.name']).toBe('traced');
    expect(span?.attributes['gen_ai.operation.name']).toBe('execute_tool');
  });

  it('links the ambient (transport) span when _meta carries the parent, and is its child when it does not', async () => {
    const { context, trace } = await import('@opentelemetry/api');
    const factory = () => {
      const server = serverWith({});
      server.registerTool('ambient', { inputSchema: z.object({}) }, async () => ({ content: [] }));
      return server;
    };
    const { client, close } = await connectModern(factory, 'ambient-client', {});
    const ambient = trace.getTracer('http').startSpan('POST /mcp');
    const inAmbient = <T>(fn: () => Promise<T>) => context.with(trace.setSpan(context.active(), ambient), fn);
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    await inAmbient(() => client.callTool({ name: 'ambient', arguments: {}, _meta: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } }));
    await inAmbient(() => client.callTool({ name: 'ambient', arguments: {} }));
    ambient.end();
    const spans = await eventually(() => spansOf('ambient-client').filter((s) => s.name === 'tools/call ambient'), (s) => s.length === 2);
    await close();
    const [continued, local] = spans;
    expect(continued?.spanContext().traceId).toBe(traceId);
    expect(continued?.links.map((link) => link.context.spanId)).toEqual([ambient.spanContext().spanId]);
    expect(local?.parentSpanContext?.spanId).toBe(ambient.spanContext().spanId);
    expect(local?.links).toEqual([]);
  });

  it('names resources by attribute only (URIs are high-cardinality), prompts in the span name', async () => {
    const factory = () => {
      const server = serverWith({});
      server.registerResource('notes', 'file:///notes.txt', {}, async (uri) => ({ contents: [{ uri: uri.href, text: 'n' }] }));
      server.registerPrompt('greet', {}, async () => ({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }] }));
      return server;
    };
    const { client, close } = await connectModern(factory, 'targets-client', {});
    await client.readResource({ uri: 'file:///notes.txt' });
    await client.getPrompt({ name: 'greet' });
    const spans = await eventually(() => spansOf('targets-client').filter((s) => s.name !== 'server/discover'), (s) => s.length === 2);
    await close();
    const read = spans.find((span) => span.attributes['mcp.method.name'] === 'resources/read');
    expect(read?.name).toBe('resources/read');
    expect(read?.attributes['mcp.resource.uri']).toBe('file:///notes.txt');
    const prompt = spans.find((span) => span.attributes['mcp.method.name'] === 'prompts/get');
    expect(prompt?.name).toBe('prompts/get greet');
    expect(prompt?.attributes['gen_ai.prompt.name']).toBe('greet');
    expect(prompt?.attributes['gen_ai.operation.name']).toBeUndefined();
  });

  it('runs the tool handler inside the MCP span, so its own spans are children', async () => {
    const { trace } = await import('@opentelemetry/api');
    let handlerTraceId: string | undefined;
    let handlerParent: string | undefined;
    const factory = () => {
      const server = serverWith({});
      server.registerTool('nested', { inputSchema: z.object({}) }, async () => {
        const child = trace.getTracer('app').startSpan('app work');
        handlerTraceId = child.spanContext().traceId;
        handlerParent = trace.getActiveSpan()?.spanContext().spanId;
        child.end();
        return { content: [] };
      });
      return server;
    };
    const { client, close } = await connectModern(factory, 'nesting-client', {});
    await client.callTool({ name: 'nested', arguments: {} });
    const [span] = await eventually(() => spansOf('nesting-client').filter((s) => s.name === 'tools/call nested'), (s) => s.length === 1);
    await close();
    expect(handlerParent).toBe(span?.spanContext().spanId);
    expect(handlerTraceId).toBe(span?.spanContext().traceId);
  });
});

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
    await clientSide.send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: { extensions: { [REPLAY]: {} } }, clientInfo: { name: 'refused-legacy', version: '1' } } });
    await eventually(() => received.length, (n) => n === 1);
    await close();
    expect(received[0]).toMatchObject({ id: 0, error: { code: expect.any(Number) } });
    const code = String((received[0]!['error'] as { code: number }).code);
    expect(await requestCount('refused-legacy', { 'mcp.method.name': 'initialize', 'extscope.server.declaration': 'unknown', 'rpc.response.status_code': code })).toBe(1);
    expect(await extensionCount('refused-legacy', REPLAY, { 'extscope.extension.client_declared': true, 'extscope.extension.server_declared': false })).toBe(1);
  });

  it('subscriptions/listen is acknowledged by the entry with a notification, and recorded once', async () => {
    const { clientSide, received, close } = await rawWire({});
    await clientSide.send({ jsonrpc: '2.0', id: 'probe', method: 'server/discover', params: { _meta: envelope('listener') } });
    await eventually(() => received.length, (n) => n === 1);
    await clientSide.send({ jsonrpc: '2.0', id: 'listen-1', method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true }, _meta: envelope('listener') } });
    await eventually(() => received.length, (n) => n === 2);
    await close();
    expect(received[1]).toMatchObject({ method: 'notifications/subscriptions/acknowledged', params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' } } });
    expect(await requestCount('listener', { 'mcp.method.name': 'subscriptions/listen', 'extscope.outcome': 'complete', 'extscope.server.declaration': 'unknown' })).toBe(1);
    // The discover probe reached the pinned instance: recorded there, once, with the server's declaration.
    expect(await requestCount('listener', { 'mcp.method.name': 'server/discover' })).toBe(1);
    expect(await requestCount('listener', { 'mcp.method.name': 'server/discover', 'extscope.server.declaration': 'declared' })).toBe(1);
  });
});
