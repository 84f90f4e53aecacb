import { OUTCOME } from '../../contract/index.js';
import type { ServeStdio, StdioTransportClass } from '../internal-types.js';
import { META_SUBSCRIPTION_ID, METHOD_INITIALIZE, METHOD_SUBSCRIPTIONS_LISTEN, NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED } from '../mcp-protocol.js';
import type { EntryExchanges } from '../observe/entry-exchange.js';
import { InFlight } from '../observe/in-flight.js';
import { type JsonRpcRequest, type Outcome, type RequestId, cancelledRequestId, isRequest, isResponse, readOutcome } from '../observe/request-facts.js';
import { asRecord } from '../observe/untrusted.js';
import type { RequestPipeline } from '../record/request-pipeline.js';
import { type TransportObserver, tapTransport } from './transport-tap.js';

/** Method recorded for an entry answer to a request the entry no longer held (e.g. answered twice). */
const UNTRACKED_METHOD = '(unknown)';
/** Requests the entry may still answer itself once an instance serves the connection. */
const ENTRY_METHODS = new Set([METHOD_INITIALIZE, METHOD_SUBSCRIPTIONS_LISTEN]);

/**
 * The patched `serveStdio`: the answers its entry gives itself — opening-message rejections, a 2025-era
 * `initialize` on a modern-only connection, `subscriptions/listen` — are recorded too. When the app passes no
 * transport, the same default the SDK would build (`new StdioServerTransport()`) is built here so it can be
 * observed.
 */
export function observingServeStdio(original: ServeStdio, StdioServerTransport: unknown, pipeline: RequestPipeline, exchanges: EntryExchanges): ServeStdio {
  return function serveStdio(this: unknown, factory, options) {
    let effective = options;
    try {
      let wire = options?.['transport'];
      if (wire === undefined && typeof StdioServerTransport === 'function') {
        wire = new (StdioServerTransport as StdioTransportClass)();
        effective = { ...options, transport: wire };
      }
      if (typeof wire === 'object' && wire !== null) tapTransport(wire, new StdioEntry(pipeline, exchanges));
    } catch (error) {
      pipeline.fail('stdio_entry', error);
    }
    return original.call(this, factory, effective);
  };
}

/**
 * One `serveStdio` wire. Every request read off it is registered as forwarded ({@link EntryExchanges.forward}):
 * the entry passes that very object on to the instance it pins, whose connection marks it reached and records
 * it. When an answer goes out on the wire, the request it answers is settled: if no instance received it, the
 * answer is the entry's own, and recorded here with no server.
 */
class StdioEntry implements TransportObserver {
  private readonly open = new InFlight<JsonRpcRequest>();
  /**
   * When the entry received the requests it is likely to answer itself (the span of such an answer starts
   * there): every request until an instance has received one, and {@link ENTRY_METHODS} after that.
   */
  private readonly receivedAt = new Map<JsonRpcRequest, number>();
  private instanceServing = false;
  // Set once requests went untracked (too many in flight): an answer the entry does not know is then no longer
  // taken for the entry's own, since it may be an instance's.
  private overflowed = false;

  constructor(
    private readonly pipeline: RequestPipeline,
    private readonly exchanges: EntryExchanges,
  ) {}

  inbound(message: unknown): undefined {
    try {
      if (isRequest(message)) {
        if (!this.open.add(message.id, message)) {
          this.overflowed = true;
          this.pipeline.fail('pending_overflow', undefined);
          return undefined;
        }
        this.exchanges.forward(message);
        if (!this.instanceServing || ENTRY_METHODS.has(message.method)) this.receivedAt.set(message, Date.now());
      } else {
        const cancelled = cancelledRequestId(message);
        if (cancelled !== undefined) this.settle(cancelled);
      }
    } catch (error) {
      this.pipeline.fail('stdio_entry', error);
    }
    return undefined;
  }

  outbound(message: unknown): void {
    try {
      if (isResponse(message)) {
        this.answered(message.id, message);
        return;
      }
      // `subscriptions/listen` is acknowledged by a notification carrying the request id, not by a response.
      const notification = asRecord(message);
      if (notification?.['method'] === NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED) {
        const id = asRecord(asRecord(notification['params'])?.['_meta'])?.[META_SUBSCRIPTION_ID];
        if (typeof id === 'string' || typeof id === 'number') this.answered(id, undefined);
      }
    } catch (error) {
      this.pipeline.fail('stdio_entry', error);
    }
  }

  closed(): void {
    for (const request of this.open.drain()) this.exchanges.settle(request);
    this.receivedAt.clear();
  }

  failed(error: unknown): void {
    this.pipeline.fail('stdio_entry', error);
  }

  /** An answer (a response, or `undefined` for a listen acknowledgement) for `id` goes out on the wire. */
  private answered(id: RequestId, response: Record<string, unknown> | undefined): void {
    const request = this.open.take(id);
    if (request === undefined) {
      // An entry answer to a request it no longer holds is still counted, as far as the answer tells.
      if (response !== undefined && !this.overflowed) this.pipeline.recordEntryAnswer({ jsonrpc: '2.0', id, method: UNTRACKED_METHOD }, this.outcome(response), Date.now());
      return;
    }
    const startTime = this.receivedAt.get(request);
    if (startTime !== undefined) this.receivedAt.delete(request);
    if (this.exchanges.settle(request)) this.pipeline.recordEntryAnswer(request, this.outcome(response), startTime ?? Date.now());
    else this.instanceServing = true; // an instance received it: its connection recorded the answer
  }

  private outcome(response: Record<string, unknown> | undefined): Outcome {
    return response === undefined ? { outcome: OUTCOME.complete } : readOutcome(response, this.pipeline.reading.limits);
  }

  /** A request cancelled before its answer: no longer the entry's to answer. */
  private settle(id: RequestId): void {
    const request = this.open.take(id);
    if (request === undefined) return;
    this.receivedAt.delete(request);
    this.exchanges.settle(request);
  }
}
