import type { AgentCore } from './agent-core.js';
import { cancelledRequestId, isRequest, isResponse, readOutcome } from './request-facts.js';
import { OUTCOME } from './semconv.js';
import { tapTransport, type TransportObserver } from './transport-tap.js';

type ServeStdio = (this: unknown, factory: unknown, options?: Record<string, unknown>) => unknown;
type TransportClass = new () => object;

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
const MAX_PENDING = 100_000;

/**
 * Wraps `serveStdio` so the answers its entry gives itself — opening-message rejections, legacy requests on a
 * modern-only connection, `subscriptions/listen` — are recorded too. Requests the entry passes on to the pinned
 * server instance are recorded by that instance's connection, not here. When the app passes no transport, the
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
  reached: boolean;
}

class EntryWire implements TransportObserver {
  private readonly pending = new Map<string | number, EntryRequest>();

  constructor(private readonly core: AgentCore) {}

  inbound(message: unknown, _extra: unknown, dispatch: () => unknown): unknown {
    try {
      if (isRequest(message)) {
        if (this.pending.size < MAX_PENDING) {
          const entry = { message, startTime: Date.now(), reached: false };
          this.pending.set(message.id, entry);
          this.core.entryRequests.set(message, entry);
        }
      } else {
        const cancelled = cancelledRequestId(message);
        if (cancelled !== undefined) this.forget(cancelled);
      }
    } catch (error) {
      this.core.fail('stdio_entry', error);
    }
    return dispatch();
  }

  outbound(message: unknown): void {
    try {
      if (isResponse(message)) {
        this.settle(message.id, () => readOutcome(message, this.core.limits));
        return;
      }
      // `subscriptions/listen` is acknowledged by a notification carrying the request id, not by a response.
      const record = message as { method?: unknown; params?: { _meta?: Record<string, unknown> } };
      if (record.method === 'notifications/subscriptions/acknowledged') {
        const id = record.params?._meta?.[SUBSCRIPTION_ID];
        if (typeof id === 'string' || typeof id === 'number') this.settle(id, () => ({ outcome: OUTCOME.complete }));
      }
    } catch (error) {
      this.core.fail('stdio_entry', error);
    }
  }

  closed(): void {
    for (const id of [...this.pending.keys()]) this.forget(id);
  }

  private settle(id: string | number, outcome: () => ReturnType<typeof readOutcome>): void {
    const entry = this.forget(id);
    if (entry !== undefined && !entry.reached) this.core.recordUnreached(entry.message, outcome(), entry.startTime);
  }

  private forget(id: string | number): EntryRequest | undefined {
    const entry = this.pending.get(id);
    if (entry === undefined) return undefined;
    this.pending.delete(id);
    this.core.entryRequests.delete(entry.message);
    return entry;
  }
}
