import type { AgentCore } from '../record/request-pipeline.js';
import { cancelledRequestId, isRequest, isResponse, readOutcome } from '../observe/request-facts.js';
import { OUTCOME } from '../../contract/index.js';
import { tapTransport, type TransportObserver } from './transport-tap.js';

type ServeStdio = (this: unknown, factory: unknown, options?: Record<string, unknown>) => unknown;
type TransportClass = new () => object;

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
/** Method recorded for an entry answer whose request was not tracked (after the connection was pinned). */
const UNTRACKED_METHOD = '(unknown)';
const MAX_PENDING = 100_000;

/**
 * Wraps `serveStdio` so the answers its entry gives itself — opening-message rejections, legacy requests on a
 * modern-only connection, `subscriptions/listen` — are recorded too. Requests the entry passes on to the pinned
 * server instance are recorded by that instance's connection, not here (see `AgentCore.lastRecordedAnswer`). When the app passes no transport, the
 * same default the SDK would build (`new StdioServerTransport()`) is built here so it can be observed.
 */
export function wrapServeStdio(original: ServeStdio, StdioServerTransport: unknown, core: AgentCore): ServeStdio {
  return function serveStdio(this: unknown, factory, options) {
    let effective = options;
    try {
      let wire = options?.['transport'];
      if (wire === undefined && typeof StdioServerTransport === 'function') {
        wire = new (StdioServerTransport as TransportClass)();
        effective = { ...options, transport: wire };
      }
      if (typeof wire === 'object' && wire !== null) tapTransport(wire, new EntryWire(core));
    } catch (error) {
      core.fail('stdio_entry', error);
    }
    return original.call(this, factory, effective);
  };
}

interface EntryRequest {
  message: object;
  startTime: number;
}

/** Requests the entry may still answer itself once an instance serves the connection. */
const ENTRY_METHODS = new Set(['initialize', 'subscriptions/listen']);

class EntryWire implements TransportObserver {
  private readonly pending = new Map<string | number, EntryRequest>();
  // Until an instance has answered, the entry may answer anything; after that, only ENTRY_METHODS. Tracking
  // just those keeps the wire's per-request cost at a Set lookup.
  private instanceServing = false;

  constructor(private readonly core: AgentCore) {}

  inbound(message: unknown): undefined {
    try {
      if (isRequest(message)) {
        const track = !this.instanceServing || ENTRY_METHODS.has(message.method);
        if (track && this.pending.size < MAX_PENDING) this.pending.set(message.id, { message, startTime: Date.now() });
      } else {
        const cancelled = cancelledRequestId(message);
        if (cancelled !== undefined) this.pending.delete(cancelled);
      }
    } catch (error) {
      this.core.fail('stdio_entry', error);
    }
    return undefined;
  }

  outbound(message: unknown): void {
    try {
      if (isResponse(message)) {
        // An answer from the pinned instance was recorded there, just before the channel passed it on.
        const recorded = message === this.core.lastRecordedAnswer;
        const entry = this.settle(message.id);
        if (recorded) this.instanceServing = true;
        else if (entry !== undefined) this.core.recordUnreached(entry.message, readOutcome(message, this.core.limits), entry.startTime);
        // An entry answer to a request not tracked is still counted, as far as the answer tells.
        else this.core.recordUnreached({ jsonrpc: '2.0', id: message.id, method: UNTRACKED_METHOD }, readOutcome(message, this.core.limits), Date.now());
        return;
      }
      // `subscriptions/listen` is acknowledged by a notification carrying the request id, not by a response.
      const record = message as { method?: unknown; params?: { _meta?: Record<string, unknown> } };
      if (record.method === 'notifications/subscriptions/acknowledged') {
        const id = record.params?._meta?.[SUBSCRIPTION_ID];
        const entry = typeof id === 'string' || typeof id === 'number' ? this.settle(id) : undefined;
        if (entry !== undefined) this.core.recordUnreached(entry.message, { outcome: OUTCOME.complete }, entry.startTime);
      }
    } catch (error) {
      this.core.fail('stdio_entry', error);
    }
  }

  closed(): void {
    this.pending.clear();
  }

  failed(error: unknown): void {
    this.core.fail('stdio_entry', error);
  }

  private settle(id: string | number): EntryRequest | undefined {
    const entry = this.pending.get(id);
    if (entry !== undefined) this.pending.delete(id);
    return entry;
  }
}
