import { describe, expect, it } from 'vitest';
import { readDeclaredExtensions } from '../../../agent/observe/extension-map.js';
import { cancelledRequestId, isRequest, isResponse, readOutcome, readRequest } from '../../../agent/observe/request-facts.js';

const limits = { maxIds: 64, maxIdLength: 128 };
const reading = { limits, declarations: { last: undefined, settingsRead: false }, spanDetails: false };
const withSpanDetails = { limits, declarations: { last: undefined, settingsRead: true }, spanDetails: true };
const envelope = (meta: Record<string, unknown>) => ({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', _meta: meta } });

describe('reading a request', () => {
  it('a 2026-07-28 request declares in its own envelope', () => {
    const facts = readRequest(
      envelope({
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' },
        'io.modelcontextprotocol/clientCapabilities': { extensions: { 'a/b': {} } },
      }),
      // Even with a legacy handshake on the instance, the envelope alone counts.
      { handshake: { client: readDeclaredExtensions({ extensions: { 'x/y': {} } }, limits), clientName: 'old' } },
      reading,
    );
    expect(facts).toMatchObject({ era: 'modern', protocolVersion: '2026-07-28', clientName: 'c', clientVersion: '1' });
    expect(facts.client.ids).toEqual(['a/b']);
  });

  it('an envelope without clientCapabilities is unknown, not none', () => {
    const facts = readRequest(envelope({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28' }), undefined, reading);
    expect(facts.client.declaration).toBe('unknown');
  });

  it('a legacy request inherits the initialize of its instance, or is unknown', () => {
    const request = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const slot = { handshake: { client: readDeclaredExtensions({ extensions: { 'a/b': {} } }, limits), clientName: 'c', protocolVersion: '2025-11-25' } };
    expect(readRequest(request, slot, reading)).toMatchObject({ era: 'legacy', clientName: 'c', protocolVersion: '2025-11-25' });
    expect(readRequest(request, slot, reading).client.ids).toEqual(['a/b']);
    const hinted = { ...reading, protocolVersionHint: (extra: unknown) => (extra as { version: string }).version };
    for (const orphan of [
      readRequest(request, undefined, hinted, { version: '2025-06-18' }),
      readRequest(request, { handshake: undefined }, hinted, { version: '2025-06-18' }),
    ]) {
      expect(orphan).toMatchObject({ era: 'legacy', protocolVersion: '2025-06-18' });
      expect(orphan.client.declaration).toBe('unknown');
    }
  });

  it('reads the handshake slot only for a legacy request other than initialize', () => {
    let reads = 0;
    const slot = {
      get handshake() {
        reads++;
        return undefined;
      },
    };
    readRequest(envelope({ 'io.modelcontextprotocol/protocolVersion': '2026-07-28' }), slot, reading);
    readRequest({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {} } }, slot, reading);
    expect(reads).toBe(0);
    readRequest({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, slot, reading);
    expect(reads).toBe(1);
  });

  it('initialize declares for itself', () => {
    const facts = readRequest(
      { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '2' } } },
      undefined,
      reading,
    );
    expect(facts).toMatchObject({ era: 'legacy', clientName: 'c', clientVersion: '2' });
    expect(facts.client.declaration).toBe('none');
  });

  it('reads the target and the trace-context carrier in the same pass, only when spans are made', () => {
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' };
    const facts = readRequest(envelope(meta), undefined, withSpanDetails);
    expect(facts).toMatchObject({ target: 'echo', targetKind: 'tool', era: 'modern' });
    expect(facts.traceCarrier).toBe(meta);
    expect(readRequest(envelope(meta), undefined, reading)).toMatchObject({ target: undefined, targetKind: undefined, traceCarrier: undefined });
    const read = (method: string, params: Record<string, unknown>) => readRequest({ jsonrpc: '2.0', id: 1, method, params }, undefined, withSpanDetails);
    expect(read('prompts/get', { name: 'greet' })).toMatchObject({ target: 'greet', targetKind: 'prompt', traceCarrier: undefined });
    expect(read('resources/read', { uri: 'file:///a' })).toMatchObject({ target: 'file:///a', targetKind: 'resource' });
    expect(read('tools/call', { name: 42 })).toMatchObject({ target: undefined, targetKind: undefined });
    expect(read('tools/list', { name: 'x' })).toMatchObject({ target: undefined, targetKind: undefined });
    // A `traceparent` that is not a string carries no trace context.
    expect(read('ping', { _meta: { traceparent: 7 } }).traceCarrier).toBeUndefined();
  });

  it('tells requests, responses and cancellations apart', () => {
    expect(isRequest({ id: 1, method: 'x' })).toBe(true);
    expect(isRequest({ id: null, method: 'x' })).toBe(false);
    expect(isRequest({ method: 'notifications/initialized' })).toBe(false);
    expect(isRequest({ id: Number.NaN, method: 'x' })).toBe(false);
    expect(isResponse({ id: 1, result: {} })).toBe(true);
    expect(isResponse({ id: 1, method: 'x' })).toBe(false);
    expect(cancelledRequestId({ method: 'notifications/cancelled', params: { requestId: 'r1' } })).toBe('r1');
    expect(cancelledRequestId({ method: 'notifications/cancelled', params: {} })).toBeUndefined();
  });
});

describe('reading an outcome', () => {
  it.each([
    [{ result: { content: [] } }, 'complete'],
    [{ result: { resultType: 'complete', content: [] } }, 'complete'],
    [{ result: { resultType: 'input_required', inputRequests: {} } }, 'input_required'],
    [{ result: { resultType: 'task', task: {} } }, 'task'],
    [{ result: { task: { taskId: 't' } } }, 'task'],
    [{ result: { resultType: 'complete', isError: true, content: [] } }, 'tool_error'],
    [{ error: { code: -32601, message: 'Method not found' } }, 'error'],
  ])('%j → %s', (response, outcome) => {
    expect(readOutcome({ jsonrpc: '2.0', id: 1, ...response }, limits).outcome).toBe(outcome);
  });

  it('keeps the error code, and the ids a -32021 names', () => {
    const outcome = readOutcome(
      { id: 1, error: { code: -32021, message: 'Missing', data: { requiredCapabilities: { extensions: { 'com.example/replay': {}, 'bad id': {} } } } } },
      limits,
    );
    expect(outcome).toMatchObject({ outcome: 'error', errorCode: -32021 });
    expect(outcome.required?.ids).toEqual(['com.example/replay']);
    expect(outcome.required?.invalid).toBe(1);
  });

  it('takes the negotiated version from an initialize result', () => {
    expect(readOutcome({ id: 0, result: { protocolVersion: '2025-06-18', capabilities: {} } }, limits).protocolVersion).toBe('2025-06-18');
  });
});
