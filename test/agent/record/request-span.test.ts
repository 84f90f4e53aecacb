import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { connectModern, eventually, instrumentation, serverWith, spansOf } from '../harness.js';

afterAll(() => instrumentation.disable());

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
    const [span] = await eventually(
      () => spansOf('traced-client').filter((s) => s.name === 'tools/call traced'),
      (s) => s.length === 1,
    );
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
    const spans = await eventually(
      () => spansOf('ambient-client').filter((s) => s.name === 'tools/call ambient'),
      (s) => s.length === 2,
    );
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
    const spans = await eventually(
      () => spansOf('targets-client').filter((s) => s.name !== 'server/discover'),
      (s) => s.length === 2,
    );
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
    const [span] = await eventually(
      () => spansOf('nesting-client').filter((s) => s.name === 'tools/call nested'),
      (s) => s.length === 1,
    );
    await close();
    expect(handlerParent).toBe(span?.spanContext().spanId);
    expect(handlerTraceId).toBe(span?.spanContext().traceId);
  });
});
