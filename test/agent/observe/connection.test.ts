import { describe, expect, it } from 'vitest';
import { Connection } from '../../../agent/observe/connection.js';
import { type EntryReach, EntryExchanges } from '../../../agent/observe/entry-exchange.js';
import type { HandshakeSlot } from '../../../agent/observe/request-facts.js';
import { ServerAdvertisements } from '../../../agent/observe/server-advertisement.js';
import { LIMITS, pipelineWithReader } from '../helpers.js';

const ENVELOPE = (name: string) => ({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name } });

function connection(options: { handshake?: HandshakeSlot; transport?: { sessionId?: unknown }; entry?: EntryReach } = {}) {
  const { pipeline, metrics } = pipelineWithReader();
  const server = new ServerAdvertisements(LIMITS).read({ getCapabilities: () => ({ extensions: { 'a/x': {} } }), _serverInfo: { name: 's', version: '1' } });
  const entry = options.entry ?? new EntryExchanges().entryFor({});
  const handshake = options.handshake ?? { handshake: undefined };
  const observed = new Connection(pipeline, entry, server, handshake, options.transport ?? {});
  const request = (id: number | string, name: string, extra?: unknown) =>
    observed.inbound({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', _meta: ENVELOPE(name) } }, extra);
  return { connection: observed, request, metrics, handshake };
}

describe('Connection: pairing requests with answers on one transport', () => {
  it('a reused id while the first is in flight: both are counted, paired with the answers in arrival order', async () => {
    const { connection: observed, request, metrics } = connection();
    request(1, 'first');
    request(1, 'second');
    observed.outbound({ jsonrpc: '2.0', id: 1, result: { content: [] } });
    observed.outbound({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'x' } });
    observed.outbound({ jsonrpc: '2.0', id: 1, result: {} }); // a third answer matches nothing
    expect(await metrics.sum('extscope.requests')).toBe(2);
    expect(await metrics.sum('extscope.requests', { 'extscope.client.name': 'first', 'extscope.outcome': 'complete' })).toBe(1);
    expect(
      await metrics.sum('extscope.requests', { 'extscope.client.name': 'second', 'extscope.outcome': 'error', 'rpc.response.status_code': '-32603' }),
    ).toBe(1);
  });

  it('ids are typed: 1 and "1" are different requests; what is in flight at close is cancelled', async () => {
    const { connection: observed, request, metrics } = connection();
    request(1, 'number');
    request('1', 'string');
    observed.outbound({ jsonrpc: '2.0', id: '1', result: {} });
    expect(await metrics.sum('extscope.requests', { 'extscope.client.name': 'string', 'extscope.outcome': 'complete' })).toBe(1);
    expect(await metrics.sum('extscope.requests', { 'extscope.client.name': 'number' })).toBe(0);
    observed.closed();
    expect(await metrics.sum('extscope.requests', { 'extscope.client.name': 'number', 'extscope.outcome': 'cancelled' })).toBe(1);
  });

  it('a request the client cancels is recorded as cancelled, and an answer after that is not counted again', async () => {
    const { connection: observed, request, metrics } = connection();
    request(7, 'canceller');
    observed.inbound({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } }, undefined);
    observed.outbound({ jsonrpc: '2.0', id: 7, result: {} });
    expect(await metrics.sum('extscope.requests')).toBe(1);
    expect(await metrics.sum('extscope.requests', { 'extscope.outcome': 'cancelled' })).toBe(1);
  });

  it("a 2025-era initialize is kept in the server object's slot: later legacy requests, on any of its connections, inherit it", async () => {
    const slot: HandshakeSlot = { handshake: undefined };
    const first = connection({ handshake: slot });
    first.connection.inbound(
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: { extensions: { 'a/x': {} } }, clientInfo: { name: 'legacy', version: '1' } },
      },
      undefined,
    );
    first.connection.outbound({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2025-06-18', capabilities: {} } });
    expect(slot.handshake).toMatchObject({ clientName: 'legacy', protocolVersion: '2025-06-18' });
    const second = connection({ handshake: slot });
    second.connection.inbound({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, undefined);
    second.connection.outbound({ jsonrpc: '2.0', id: 1, result: { tools: [] } });
    expect(
      await second.metrics.sum('extscope.requests', {
        'extscope.client.name': 'legacy',
        'extscope.client.declaration': 'declared',
        'mcp.protocol.version': '2025-06-18',
        'mcp.method.name': 'tools/list',
      }),
    ).toBe(1);
    expect(await second.metrics.sum('extscope.extension.requests', { 'extscope.extension.id': 'a/x', 'extscope.extension.negotiated': true })).toBe(1);
  });

  it('a failed initialize leaves the slot as it was', () => {
    const slot: HandshakeSlot = { handshake: undefined };
    const { connection: observed } = connection({ handshake: slot });
    observed.inbound({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } }, undefined);
    observed.outbound({ jsonrpc: '2.0', id: 0, error: { code: -32602, message: 'no' } });
    expect(slot.handshake).toBeUndefined();
  });

  it('takes an orphan legacy request’s protocol version from the MCP-Protocol-Version header (Fetch or Node headers)', async () => {
    const { connection: observed, metrics } = connection();
    observed.inbound({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { request: { headers: new Headers({ 'mcp-protocol-version': '2025-06-18' }) } });
    observed.inbound({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { requestInfo: { headers: { 'mcp-protocol-version': '2025-03-26' } } });
    observed.outbound({ jsonrpc: '2.0', id: 1, result: {} });
    observed.outbound({ jsonrpc: '2.0', id: 2, result: {} });
    expect(await metrics.sum('extscope.requests', { 'mcp.protocol.version': '2025-06-18', 'extscope.client.declaration': 'unknown' })).toBe(1);
    expect(await metrics.sum('extscope.requests', { 'mcp.protocol.version': '2025-03-26', 'extscope.client.declaration': 'unknown' })).toBe(1);
  });

  it('reports every request it receives (and nothing else) to the entry its server was built for', () => {
    const reached: unknown[] = [];
    const { connection: observed, request } = connection({ entry: { reached: (id) => void reached.push(id) } });
    request(3, 'c');
    request('x', 'c');
    observed.inbound({ jsonrpc: '2.0', method: 'notifications/initialized' }, undefined);
    observed.outbound({ jsonrpc: '2.0', id: 3, result: {} });
    expect(reached).toEqual([3, 'x']);
  });

  it('records the session id of a session transport on the span only when it is a string', async () => {
    const { pipeline } = pipelineWithReader();
    const finished: (string | undefined)[] = [];
    const sink = {
      reading: pipeline.reading,
      start: () => undefined,
      fail: () => {},
      count: () => {},
      finish: (...args: unknown[]) => finished.push(args[4] as string | undefined),
    };
    const server = new ServerAdvertisements(LIMITS).read({});
    for (const sessionId of ['abc', 42, undefined]) {
      const observed = new Connection(sink, new EntryExchanges().entryFor({}), server, { handshake: undefined }, { sessionId });
      observed.inbound({ jsonrpc: '2.0', id: 1, method: 'ping' }, undefined);
      observed.outbound({ jsonrpc: '2.0', id: 1, result: {} });
    }
    expect(finished).toEqual(['abc', undefined, undefined]);
  });
});
