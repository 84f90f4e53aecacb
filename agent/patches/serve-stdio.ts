import { OUTCOME } from '../../contract/index.js';
import type { McpServerLike, ServeStdio, StdioTransportClass } from '../internal-types.js';
import { META_SUBSCRIPTION_ID, METHOD_INITIALIZE, METHOD_SUBSCRIPTIONS_LISTEN, NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED } from '../mcp-protocol.js';
import type { EntryExchanges, EntryReach } from '../observe/entry-exchange.js';
import { InFlight } from '../observe/in-flight.js';
import { type JsonRpcRequest, type Outcome, type RequestId, cancelledRequestId, isRequest, isResponse, readOutcome } from '../observe/request-facts.js';
import { asRecord } from '../observe/untrusted.js';
import type { RequestPipeline } from '../record/request-pipeline.js';
import { ENTRY_WIRE_WRAPPERS, type TransportObserver, tapTransport } from './transport-tap.js';

/** Method recorded for an entry answer to a request the entry no longer held (e.g. answered twice). */
const UNTRACKED_METHOD = '(unknown)';
/** Requests the entry may still answer itself once an instance serves the connection. */
const ENTRY_METHODS = new Set([METHOD_INITIALIZE, METHOD_SUBSCRIPTIONS_LISTEN]);

type Factory = (this: unknown, ...args: unknown[]) => unknown;

/**
 * The patched `serveStdio`: the answers its entry gives itself — opening-message rejections, a 2025-era
 * `initialize` on a modern-only connection, `subscriptions/listen` — are recorded too. When the app passes no
 * transport, the same default the SDK would build (`new StdioServerTransport()`) is built here so it can be
 * observed. The factory is wrapped only to learn which server instances this entry builds.
 */
export function observingServeStdio(original: ServeStdio, StdioServerTransport: unknown, pipeline: RequestPipeline, exchanges: EntryExchanges): ServeStdio {
  return function serveStdio(this: unknown, factory, options) {
    let effective = options;
    let effectiveFactory = factory;
    try {
      let wire = options?.['transport'];
      if (wire === undefined && typeof StdioServerTransport === 'function') {
        wire = new (StdioServerTransport as StdioTransportClass)();
        effective = { ...options, transport: wire };
      }
      if (typeof wire === 'object' && wire !== null && typeof factory === 'function') {
        const entry = new StdioEntry(pipeline);
        tapTransport(wire, entry, 'at-start', ENTRY_WIRE_WRAPPERS);
        effectiveFactory = reportingFactory(factory as Factory, (server) => registerBuilt(exchanges, server, entry));
      }
    } catch (error) {
      pipeline.fail('stdio_entry', error);
    }
    return original.call(this, effectiveFactory, effective);
  };
}

/** The app's factory, unchanged in what it returns or throws; `built` sees each server it returns. */
function reportingFactory(factory: Factory, built: (server: unknown) => void): Factory {
  const report = (server: unknown): unknown => {
    try {
      built(server);
    } catch {
      // registerBuilt() only reads the product; nothing here may fail the factory.
    }
    return server;
  };
  return function factoryObserved(this: unknown, ...args: unknown[]) {
    const product = factory.apply(this, args);
    const then = (product as { then?: unknown } | null)?.then;
    return typeof then === 'function' ? (product as PromiseLike<unknown>).then(report) : report(product);
  };
}

/** An `McpServer`'s connections run on its inner `Server`: both report to the entry. */
function registerBuilt(exchanges: EntryExchanges, server: unknown, entry: EntryReach): void {
  if (typeof server !== 'object' || server === null) return;
  exchanges.builtBy(server, entry);
  const inner = (server as McpServerLike).server;
  if (typeof inner === 'object' && inner !== null) exchanges.builtBy(inner, entry);
}

/** A request a server instance received: the entry no longer holds it as one it may answer. */
const REACHED = Symbol('reached');
type Held = JsonRpcRequest | typeof REACHED;
const isUnreached = (held: Held): boolean => held !== REACHED;

/**
 * One `serveStdio` wire. It holds every request read off the wire until it is answered; the connection of the
 * instance the entry pinned marks each request it receives as reached ({@link reached}). When an answer goes
 * out on the wire, a request still unreached was answered by the entry itself, and is recorded here, with no
 * server.
 */
class StdioEntry implements TransportObserver, EntryReach {
  private readonly open = new InFlight<Held>();
  /**
   * When the entry received the requests it is likely to answer itself (the span of such an answer starts
   * there): every request until an instance has received one, and {@link ENTRY_METHODS} after that.
   */
  private readonly receivedAt = new Map<JsonRpcRequest, number>();
  /**
   * `subscriptions/listen` requests the entry acknowledged (and recorded then). Their final answer, the empty
   * result the entry sends when it closes the subscription, is the same request's and is not counted again.
   */
  private readonly subscriptions = new Set<RequestId>();
  private instanceServing = false;
  // Set once requests went untracked (too many in flight): an answer the entry does not know is then no longer
  // taken for the entry's own, since it may be an instance's.
  private overflowed = false;

  constructor(private readonly pipeline: RequestPipeline) {}

  inbound(message: unknown): undefined {
    try {
      if (isRequest(message)) {
        if (!this.open.add(message.id, message)) {
          this.overflowed = true;
          this.pipeline.fail('pending_overflow', undefined);
        } else if (!this.instanceServing || ENTRY_METHODS.has(message.method)) {
          this.receivedAt.set(message, Date.now());
        }
      } else {
        const cancelled = cancelledRequestId(message);
        if (cancelled !== undefined) {
          this.release(this.open.take(cancelled));
          this.subscriptions.delete(cancelled);
        }
      }
    } catch (error) {
      this.pipeline.fail('stdio_entry', error);
    }
    return undefined;
  }

  /** A server instance this entry built received the request under `id`. */
  reached(id: RequestId): void {
    this.instanceServing = true;
    this.release(this.open.replaceOldest(id, isUnreached, REACHED));
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
        if ((typeof id === 'string' || typeof id === 'number') && this.answered(id, undefined)) this.subscriptions.add(id);
      }
    } catch (error) {
      this.pipeline.fail('stdio_entry', error);
    }
  }

  closed(): void {
    this.open.drain();
    this.receivedAt.clear();
    this.subscriptions.clear();
  }

  failed(error: unknown): void {
    this.pipeline.fail('stdio_entry', error);
  }

  /**
   * An answer (a response, or `undefined` for a listen acknowledgement) for `id` goes out on the wire; `true`
   * when it was the entry's own answer to a request it held, and so recorded here.
   */
  private answered(id: RequestId, response: Record<string, unknown> | undefined): boolean {
    const held = this.open.take(id);
    if (held === REACHED) return false; // the instance's answer: its connection recorded it
    if (held === undefined) {
      if (response === undefined || this.subscriptions.delete(id)) return false;
      // An entry answer to a request it no longer holds is still counted, as far as the answer tells.
      if (!this.overflowed) this.pipeline.recordEntryAnswer({ jsonrpc: '2.0', id, method: UNTRACKED_METHOD }, this.outcome(response), Date.now());
      return false;
    }
    const startTime = this.release(held);
    this.pipeline.recordEntryAnswer(held, this.outcome(response), startTime ?? Date.now());
    return true;
  }

  private outcome(response: Record<string, unknown> | undefined): Outcome {
    return response === undefined ? { outcome: OUTCOME.complete } : readOutcome(response, this.pipeline.reading.limits);
  }

  /** Forgets when a request no longer held was received; returns that time. */
  private release(held: Held | undefined): number | undefined {
    if (held === undefined || held === REACHED || this.receivedAt.size === 0) return undefined;
    const startTime = this.receivedAt.get(held);
    if (startTime !== undefined) this.receivedAt.delete(held);
    return startTime;
  }
}
