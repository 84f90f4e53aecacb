import { describe, expect, it } from 'vitest';
import { ENTRY_WIRE_WRAPPERS, type MessageWrappers, type TransportObserver, tapTransport } from '../../../agent/patches/transport-tap.js';

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
    tapTransport(transport, observer, 'at-start');
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
    tapTransport(transport, observer, 'at-start');
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
    tapTransport(transport, observer, 'at-start');
    const previous = transport.onmessage;
    transport.onmessage = (message) => previous?.(message);
    await transport.start();
    transport.onmessage?.({ id: 2, method: 'x' });
    expect(user).toHaveLength(1);
    expect(seen).toHaveLength(1);
  });

  // The two sets of per-message wrappers (see transport-tap.ts for why there are two) behave alike.
  const wrapperSets: [string, MessageWrappers | undefined][] = [
    ["a server object's transport", undefined],
    ["a serveStdio entry's wire", ENTRY_WIRE_WRAPPERS],
  ];
  for (const [kind, wrappers] of wrapperSets) {
    it(`${kind}: passes send arguments and return values through untouched`, async () => {
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
      tapTransport(transport, observer, 'at-start', wrappers);
      const message = { id: 1, result: {} };
      expect(await transport.send(message, { relatedRequestId: 1 })).toBe('sent');
      expect(calls).toEqual([[message, { relatedRequestId: 1 }]]);
      expect(calls[0]?.[0]).toBe(message);
      expect(sent).toEqual([message]);
    });

    it(`${kind}: passes on exactly the arguments and \`this\` each call had, at every arity, to send and to onmessage`, async () => {
      const sends: { self: unknown; args: unknown[] }[] = [];
      const deliveries: { self: unknown; args: unknown[] }[] = [];
      const transport = {
        onmessage(this: unknown, ...args: unknown[]) {
          deliveries.push({ self: this, args });
          return 'dispatched';
        },
        start: async () => {},
        send(this: unknown, ...args: unknown[]) {
          sends.push({ self: this, args });
          return 'sent';
        },
      };
      const { observer, seen } = recordingObserver();
      tapTransport(transport, observer, 'at-start', wrappers);
      await transport.start();
      const message = { jsonrpc: '2.0', id: 1, method: 'ping' };
      const arities: unknown[][] = [[], [message], [message, undefined], [message, { relatedRequestId: 1 }], [message, { a: 1 }, 'third']];
      const send = transport.send as (...args: unknown[]) => unknown;
      const onmessage = transport.onmessage as (...args: unknown[]) => unknown;
      for (const args of arities) {
        expect(send.apply(transport, args)).toBe('sent');
        expect(onmessage.apply(transport, args)).toBe('dispatched');
      }
      // Strict: [message] and [message, undefined] are different calls.
      expect(sends.map((call) => call.args)).toStrictEqual(arities);
      expect(deliveries.map((call) => call.args)).toStrictEqual(arities);
      expect(sends.map((call) => call.args.length)).toEqual([0, 1, 2, 2, 3]);
      expect(sends.every((call) => call.self === transport) && deliveries.every((call) => call.self === transport)).toBe(true);
      expect(seen).toHaveLength(arities.length);
    });
  }

  it('refuses, changing nothing, a transport it cannot observe', () => {
    const frozen = Object.freeze({ onmessage: undefined, start: async () => {}, send: async () => {} });
    expect(() => tapTransport(frozen, recordingObserver().observer, 'before-connect')).toThrow();
    const sealed: Record<string, unknown> = { start: async () => {} };
    Object.defineProperty(sealed, 'send', { value: async () => {}, configurable: false, writable: false });
    expect(() => tapTransport(sealed, recordingObserver().observer, 'before-connect')).toThrow(/read-only/);
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
    tapTransport(transport, observer, 'at-start');
    await transport.start();
    expect(started).toBe(true);
    expect(failures).toHaveLength(1);
  });

  it("reports the close before the transport's own onclose runs", async () => {
    const transport = new ForwardingTransport();
    const order: string[] = [];
    const observer: TransportObserver = { ...recordingObserver().observer, closed: () => order.push('observer') };
    tapTransport(transport, observer, 'at-start');
    transport.onclose = () => order.push('transport');
    await transport.start();
    transport.onclose?.();
    expect(order).toEqual(['observer', 'transport']);
  });

  it("hooked before connect, reports the close first and is off the stack when a connect's chained onclose goes on (as Protocol.connect chains it)", async () => {
    const transport = new ForwardingTransport();
    const order: string[] = [];
    const observer: TransportObserver = { ...recordingObserver().observer, closed: () => order.push('observer') };
    tapTransport(transport, observer, 'before-connect');
    // What Protocol.connect does with the onclose it finds, then the SDK's `_onclose`, which builds an error.
    const found = transport.onclose;
    let stack = '';
    transport.onclose = () => {
      try {
        found?.();
      } finally {
        order.push('sdk');
        stack = new Error('Connection closed').stack ?? '';
      }
    };
    await transport.start();
    transport.onclose?.();
    expect(order).toEqual(['observer', 'sdk']);
    expect(stack).toContain('Connection closed');
    expect(stack).not.toContain('observedOnClose');
  });

  it('hooked before connect, still calls the onclose the transport had, after the observer', async () => {
    const transport = new ForwardingTransport();
    const order: string[] = [];
    transport.onclose = () => order.push('transport');
    const { observer, closed } = recordingObserver();
    tapTransport(transport, { ...observer, closed: () => order.push('observer') }, 'before-connect');
    await transport.start();
    transport.onclose?.();
    expect(order).toEqual(['observer', 'transport']);
    expect(closed()).toBe(0);
  });
});
