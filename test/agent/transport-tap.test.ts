import { trace } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { AgentCore } from '../../agent/record/request-pipeline.js';
import { type TransportObserver, tapTransport } from '../../agent/patches/transport-tap.js';
import { Recorder } from '../../agent/record/recorder.js';
import { Tally } from '../../agent/record/counter-streams.js';
import { DEFAULT_CONFIG } from '../../agent/types.js';
import { ValueGuard } from '../../agent/record/value-guard.js';

function recordingObserver() {
  const seen: unknown[] = [];
  const sent: unknown[] = [];
  const failures: unknown[] = [];
  let closed = 0;
  const observer: TransportObserver = {
    inbound: (message) => {
      seen.push(message);
      return undefined;
    },
    outbound: (message) => sent.push(message),
    closed: () => {
      closed++;
    },
    failed: (error) => failures.push(error),
  };
  return { observer, seen, sent, failures, closed: () => closed };
}

/** Like the Node streamable HTTP transport: onmessage is a prototype accessor forwarding to an inner object. */
class ForwardingTransport {
  inner: { onmessage?: (message: unknown) => void; onclose?: () => void } = {};
  get onmessage() {
    return this.inner.onmessage;
  }
  set onmessage(handler) {
    this.inner.onmessage = handler;
  }
  get onclose() {
    return this.inner.onclose;
  }
  set onclose(handler) {
    this.inner.onclose = handler;
  }
  async start(): Promise<void> {}
  async send(_message: unknown): Promise<void> {}
  deliver(message: unknown) {
    this.inner.onmessage?.(message);
  }
}

/** Like the SDK's in-memory transport: messages queued before start are delivered inside start. */
class QueueingTransport {
  onmessage?: (message: unknown) => void;
  queue: unknown[] = [{ id: 'early', method: 'ping' }];
  async start(): Promise<void> {
    for (const message of this.queue.splice(0)) this.onmessage?.(message);
  }
  async send(_message: unknown): Promise<void> {}
}

describe('tapping a transport', () => {
  it('delegates to inherited accessors, so delivery through the inner transport keeps working', async () => {
    const transport = new ForwardingTransport();
    const { observer, seen } = recordingObserver();
    tapTransport(transport, observer);
    const delivered: unknown[] = [];
    transport.onmessage = (message) => delivered.push(message);
    await transport.start();
    expect(Object.getOwnPropertyDescriptor(transport, 'onmessage')).toBeUndefined();
    transport.deliver({ id: 1, method: 'ping' });
    expect(delivered).toEqual([{ id: 1, method: 'ping' }]);
    expect(seen).toEqual([{ id: 1, method: 'ping' }]);
  });

  it('sees messages an in-memory transport delivers inside start()', async () => {
    const transport = new QueueingTransport();
    const { observer, seen } = recordingObserver();
    tapTransport(transport, observer);
    const delivered: unknown[] = [];
    transport.onmessage = (message) => delivered.push(message);
    await transport.start();
    expect(delivered).toEqual([{ id: 'early', method: 'ping' }]);
    expect(seen).toEqual(delivered);
  });

  it('observes a message once when a pre-existing callback is chained inside the new one (as connect does)', async () => {
    const transport = new QueueingTransport();
    transport.queue = [];
    const { observer, seen } = recordingObserver();
    const user: unknown[] = [];
    transport.onmessage = (message) => user.push(message);
    tapTransport(transport, observer);
    const previous = transport.onmessage;
    transport.onmessage = (message) => previous?.(message);
    await transport.start();
    transport.onmessage?.({ id: 2, method: 'x' });
    expect(user).toHaveLength(1);
    expect(seen).toHaveLength(1);
  });

  it('passes send arguments and return values through untouched', async () => {
    const calls: unknown[][] = [];
    const transport = {
      onmessage: undefined,
      start: async () => {},
      send(...args: unknown[]) {
        calls.push(args);
        return Promise.resolve('sent');
      },
    };
    const { observer, sent } = recordingObserver();
    tapTransport(transport, observer);
    const message = { id: 1, result: {} };
    expect(await transport.send(message, { relatedRequestId: 1 })).toBe('sent');
    expect(calls).toEqual([[message, { relatedRequestId: 1 }]]);
    expect(calls[0]?.[0]).toBe(message);
    expect(sent).toEqual([message]);
  });

  it('refuses, changing nothing, a transport it cannot observe', () => {
    const frozen = Object.freeze({ onmessage: undefined, start: async () => {}, send: async () => {} });
    expect(() => tapTransport(frozen, recordingObserver().observer)).toThrow();
    const sealed: Record<string, unknown> = { start: async () => {} };
    Object.defineProperty(sealed, 'send', { value: async () => {}, configurable: false, writable: false });
    expect(() => tapTransport(sealed, recordingObserver().observer)).toThrow(/read-only/);
    expect(Object.keys(sealed)).toEqual(['start']);
  });

  it('a callback that cannot be wrapped is reported, and start still runs', async () => {
    let started = false;
    const transport = {
      get onmessage() {
        return () => {};
      },
      set onmessage(_value) {
        throw new Error('no');
      },
      start: async () => {
        started = true;
      },
      send: async () => {},
    };
    const { observer, failures } = recordingObserver();
    tapTransport(transport, observer);
    await transport.start();
    expect(started).toBe(true);
    expect(failures).toHaveLength(1);
  });
});

describe('bounded memory', () => {
  it('a value guard admits `limit` values, then folds the rest into _OTHER and counts them', () => {
    const overflowed: string[] = [];
    const guard = new ValueGuard('attr', 3, 10, (attribute) => overflowed.push(attribute));
    expect(['a', 'b', 'c', 'a'].map((value) => guard.admit(value))).toEqual(['a', 'b', 'c', 'a']);
    expect(guard.admit('d')).toBe('_OTHER');
    expect(guard.admit('x'.repeat(50))).toBe('_OTHER');
    expect(overflowed).toEqual(['attr', 'attr']);
    expect(guard.size).toBe(3);
  });

  it('a tally keeps at most maxStreams keys, and counts the rest in one overflow stream', () => {
    const tally = new Tally(2);
    for (const key of ['a', 'b', 'c', 'd', 'a']) tally.add(key, '', { key });
    tally.add('a', 'inner', { key: 'a/inner' });
    expect(tally.size).toBe(3); // a, b, and the overflow stream
    expect(tally.total()).toBe(6);
  });

  it('the recorder stays within its caps under 10,000 distinct junk ids', () => {
    const recorder = new Recorder({ ...DEFAULT_CONFIG, cardinalityLimit: 100, maxStreams: 500 });
    for (let i = 0; i < 10_000; i++) {
      recorder.record({
        facts: {
          method: `junk/${i}`,
          id: i,
          era: 'modern',
          clientName: `client-${i}`,
          client: { declaration: 'declared', ids: [`com.junk/id-${i}`], settings: [{}], invalid: 1, dropped: 0 },
        },
        server: undefined,
        outcome: { outcome: 'complete' },
      });
    }
    expect(recorder.requests.size).toBeLessThanOrEqual(501);
    expect(recorder.extensionRequests.size).toBeLessThanOrEqual(501);
    expect(recorder.requests.total()).toBe(10_000);
    expect(recorder.rejectedIds.total()).toBe(10_000);
    expect(recorder.overflow.total()).toBeGreaterThan(0);
  });
});

describe('pairing requests with answers on one connection', () => {
  function connection() {
    const core = new AgentCore(DEFAULT_CONFIG, () => trace.getTracer('unused'), undefined);
    const transport = { onmessage: undefined as undefined | ((m: unknown) => void), onclose: undefined as undefined | (() => void), start: async () => {}, send: async (_m: unknown) => {} };
    core.attach({ getCapabilities: () => ({}), _serverInfo: { name: 's', version: '1' } }, transport);
    transport.onmessage = () => {};
    transport.onclose = () => {};
    void transport.start();
    const request = (id: number | string, name: string) =>
      transport.onmessage!({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name } } } });
    return { core, transport, request };
  }

  it('a reused id while the first is in flight: both are counted, answered in order', async () => {
    const { core, transport, request } = connection();
    request(1, 'first');
    request(1, 'second');
    await transport.send({ jsonrpc: '2.0', id: 1, result: { content: [] } });
    await transport.send({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'x' } });
    await transport.send({ jsonrpc: '2.0', id: 1, result: {} }); // a third answer matches nothing
    expect(core.recorder.requests.total()).toBe(2);
  });

  it('ids are per connection and typed: 1 and "1" are different requests', async () => {
    const { core, transport, request } = connection();
    request(1, 'number');
    request('1', 'string');
    await transport.send({ jsonrpc: '2.0', id: '1', result: {} });
    expect(core.recorder.requests.total()).toBe(1);
    transport.onclose!(); // the number-id request never got an answer: cancelled on close
    expect(core.recorder.requests.total()).toBe(2);
  });
});
