import { describe, expect, it } from 'vitest';
import { ServerAdvertisements } from '../../../agent/observe/server-advertisement.js';
import type { ServerAdvertisement } from '../../../agent/observe/server-advertisement.js';
import { WireConnection } from '../../../agent/wire/connection.js';
import { LIMITS, pipelineWithReader } from '../helpers.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const SEARCH = 'com.example/search';
const envelope = (extensions: Record<string, unknown>) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'wire-client', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions },
});

function wire(active = () => true) {
  const { pipeline, metrics } = pipelineWithReader();
  const announced: ServerAdvertisement[] = [];
  const connection = new WireConnection(pipeline, { announce: (server) => announced.push(server), identify: () => {} }, new ServerAdvertisements(LIMITS), {
    active,
  });
  return { connection, metrics, announced };
}

describe('WireConnection: per-request semantics from the wire alone', () => {
  it('2026-07-28: the server map comes from its server/discover answer, each request declares for itself', async () => {
    const { connection, metrics, announced } = wire();
    connection.inbound({ jsonrpc: '2.0', id: 'p', method: 'server/discover', params: { _meta: envelope({ [TASKS]: {} }) } });
    connection.outbound({
      jsonrpc: '2.0',
      id: 'p',
      result: {
        supportedVersions: ['2026-07-28'],
        capabilities: { extensions: { [TASKS]: {}, [SEARCH]: { mode: 'fast' } } },
        resultType: 'complete',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'wire-server', version: '9' } },
      },
    });
    // A batch: two requests, different maps.
    connection.inbound([
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'a', _meta: envelope({ [SEARCH]: {} }) } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'a', _meta: envelope({}) } },
    ]);
    connection.outbound([
      { jsonrpc: '2.0', id: 2, result: { resultType: 'complete', content: [] } },
      { jsonrpc: '2.0', id: 1, result: { resultType: 'complete', content: [], isError: true } },
    ]);
    expect(announced.map((server) => [server.identity, server.extensions.ids])).toEqual([[{ name: 'wire-server', version: '9' }, [TASKS, SEARCH]]]);
    expect(await metrics.sum('extscope.requests', { 'extscope.server.name': 'wire-server', 'extscope.era': 'modern' })).toBe(3);
    expect(await metrics.sum('extscope.requests', { 'mcp.method.name': 'tools/call', 'extscope.outcome': 'tool_error' })).toBe(1);
    expect(await metrics.sum('extscope.extension.requests', { 'extscope.extension.id': TASKS, 'extscope.extension.negotiated': true })).toBe(1);
    expect(await metrics.sum('extscope.extension.requests', { 'extscope.extension.id': SEARCH, 'extscope.extension.negotiated': true })).toBe(1);
    expect(
      await metrics.sum('extscope.extension.requests', {
        'extscope.extension.id': SEARCH,
        'extscope.extension.client_declared': false,
        'extscope.extension.server_declared': true,
      }),
    ).toBe(2);
  });

  it('2025 era: initialize declares for the conversation; a request answered before any server answer has no server', async () => {
    const { connection, metrics } = wire();
    connection.inbound({ jsonrpc: '2.0', id: 'probe', method: 'server/discover', params: {} });
    connection.outbound({ jsonrpc: '2.0', id: 'probe', error: { code: -32601, message: 'Method not found' } });
    connection.inbound({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: { extensions: { [TASKS]: {} } }, clientInfo: { name: 'legacy', version: '2' } },
    });
    connection.outbound({
      jsonrpc: '2.0',
      id: 0,
      result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'legacy-server', version: '1' } },
    });
    connection.inbound({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    connection.inbound({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow' } });
    connection.outbound({ jsonrpc: '2.0', id: 1, result: { tools: [] } });
    connection.inbound({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } });
    expect(
      await metrics.sum('extscope.requests', {
        'extscope.server.declaration': 'unknown',
        'mcp.method.name': 'server/discover',
        'rpc.response.status_code': '-32601',
      }),
    ).toBe(1);
    expect(
      await metrics.sum('extscope.requests', {
        'extscope.client.name': 'legacy',
        'extscope.server.name': 'legacy-server',
        'extscope.server.declaration': 'none',
        'mcp.protocol.version': '2025-11-25',
      }),
    ).toBe(3);
    expect(await metrics.sum('extscope.requests', { 'extscope.client.name': 'legacy', 'extscope.outcome': 'cancelled' })).toBe(1);
    expect(await metrics.sum('extscope.extension.requests', { 'extscope.extension.id': TASKS, 'extscope.extension.client_declared': true })).toBe(3);
  });

  it('2026-07-28 without a discover on this conversation: results name the server, its map stays unknown', async () => {
    const { connection, metrics, announced } = wire();
    connection.inbound({ jsonrpc: '2.0', id: 0, method: 'tools/list', params: { _meta: envelope({ [TASKS]: {} }) } });
    connection.outbound({
      jsonrpc: '2.0',
      id: 0,
      result: { tools: [], resultType: 'complete', _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'named', version: '2' } } },
    });
    connection.inbound({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope({ [TASKS]: {} }) } });
    connection.outbound({ jsonrpc: '2.0', id: 1, result: { tools: [], resultType: 'complete' } });
    expect(announced).toEqual([]);
    expect(await metrics.sum('extscope.requests', { 'extscope.server.name': 'named', 'extscope.server.declaration': 'unknown' })).toBe(2);
    expect(await metrics.sum('extscope.extension.requests', { 'extscope.extension.id': TASKS, 'extscope.extension.server_declared': false })).toBe(2);
  });

  it('an error answered with id null, or the end of an exchange, settles what is still open', async () => {
    const { connection, metrics } = wire();
    connection.inbound({ jsonrpc: '2.0', id: 5, method: 'tools/list' });
    connection.outbound({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: Server not initialized' } });
    expect(await metrics.sum('extscope.requests')).toBe(0);
    connection.settle(connection.anonymousError!);
    expect(await metrics.sum('extscope.requests', { 'extscope.outcome': 'error', 'rpc.response.status_code': '-32000' })).toBe(1);
  });

  it('a 2025-era request without its initialize (stateless HTTP): unknown, with the revision its header states', async () => {
    const { pipeline, metrics } = pipelineWithReader();
    const connection = new WireConnection(pipeline, { announce: () => {}, identify: () => {} }, new ServerAdvertisements(LIMITS), {
      protocolVersionHeader: '2025-11-25',
    });
    connection.inbound({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } });
    connection.outbound({ jsonrpc: '2.0', id: 1, result: { content: [] } });
    expect(
      await metrics.sum('extscope.requests', { 'extscope.client.declaration': 'unknown', 'extscope.era': 'legacy', 'mcp.protocol.version': '2025-11-25' }),
    ).toBe(1);
  });

  it('records nothing once no longer active (an SDK copy patched later records instead)', async () => {
    let active = true;
    const { connection, metrics } = wire(() => active);
    connection.inbound({ jsonrpc: '2.0', id: 1, method: 'ping' });
    active = false;
    connection.outbound({ jsonrpc: '2.0', id: 1, result: {} });
    expect(await metrics.sum('extscope.requests')).toBe(0);
  });
});
