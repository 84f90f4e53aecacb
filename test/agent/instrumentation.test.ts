import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  CAPS,
  REPLAY,
  TASKS,
  barrier,
  connectModern,
  eventually,
  extensionCount,
  instrumentation,
  requestCount,
  serverWith,
  spanExporter,
  spansOf,
  total,
  v2,
} from './harness.js';

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
    expect(
      await total('extscope.requests', {
        'mcp.method.name': 'tools/call',
        'extscope.client.declaration': 'unknown',
        'extscope.server.name': 'test-server',
        'rpc.response.status_code': '-32602',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(await extensionCount('concurrent-client', TASKS, { 'mcp.method.name': 'tools/call', 'extscope.extension.negotiated': true })).toBe(1);
    expect(
      await extensionCount('concurrent-client', TASKS, {
        'mcp.method.name': 'tools/call',
        'extscope.extension.client_declared': false,
        'extscope.extension.server_declared': true,
      }),
    ).toBe(1);
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
    const [span] = await eventually(
      () => spansOf('intersection-client').filter((s) => s.name === 'tools/call echo'),
      (s) => s.length === 1,
    );
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
    expect(
      await extensionCount('intersection-client', REPLAY, {
        ...call,
        'extscope.extension.client_declared': true,
        'extscope.extension.server_declared': false,
        'extscope.extension.negotiated': false,
      }),
    ).toBe(1);
    expect(await extensionCount('intersection-client', 'org.unknown/thing', { ...call, 'extscope.extension.negotiated': false })).toBe(1);
    expect(
      await requestCount('intersection-client', { ...call, 'extscope.outcome': 'complete', 'extscope.era': 'modern', 'mcp.protocol.version': '2026-07-28' }),
    ).toBe(1);
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

    for (const [outcome, count] of [
      ['complete', 2],
      ['tool_error', 1],
      ['input_required', 1],
      ['task', 1],
      ['error', 3],
      ['cancelled', 1],
    ] as const) {
      expect(await requestCount('outcome-client', { 'extscope.outcome': outcome }), outcome).toBe(count);
    }
    expect(await requestCount('outcome-client', { 'rpc.response.status_code': '-32021' })).toBe(1);
    expect(await extensionCount('outcome-client', REPLAY, { 'extscope.extension.required': true, 'extscope.extension.client_declared': false })).toBe(1);
  });
});
