import type { Context, Span } from '@opentelemetry/api';
import type { AgentCore } from '../record/request-pipeline.js';
import { markReached } from './entry-exchange.js';
import { type RequestFacts, cancelledRequestId, isRequest, isResponse, readOutcome, readRequest } from './request-facts.js';
import { ERA, OUTCOME } from '../../contract/index.js';
import type { ServerLike, ServerView } from './server-advertisement.js';
import type { TransportObserver } from '../patches/transport-tap.js';

interface Pending {
  facts: RequestFacts;
  span: Span | undefined;
}

/** Requests in flight on one connection; beyond this the connection is misbehaving and we stop tracking. */
const MAX_PENDING = 100_000;

function protocolVersionHeader(extra: unknown): string | undefined {
  if (typeof extra !== 'object' || extra === null) return undefined;
  const { request, requestInfo } = extra as { request?: { headers?: unknown }; requestInfo?: { headers?: unknown } };
  const webHeaders = request?.headers as { get?: (name: string) => string | null } | undefined;
  if (typeof webHeaders?.get === 'function') return webHeaders.get('mcp-protocol-version') ?? undefined;
  const nodeHeaders = requestInfo?.headers as Record<string, unknown> | undefined;
  const value = nodeHeaders?.['mcp-protocol-version'];
  return typeof value === 'string' ? value : undefined;
}

/**
 * One server object on one transport: pairs each inbound request with its answer. JSON-RPC ids are unique
 * only per transport (every per-request HTTP instance starts at 0), so this state is per connection.
 */
export class Connection implements TransportObserver {
  private readonly pending = new Map<string | number, Pending>();
  // A client may reuse an id while the first request with it is still in flight; those wait here, in order.
  private readonly reused = new Map<string | number, Pending[]>();

  constructor(
    private readonly core: AgentCore,
    private readonly server: ServerLike,
    private readonly view: ServerView,
    private readonly transport: { sessionId?: unknown },
  ) {}

  inbound(message: unknown, extra: unknown): Context | undefined {
    try {
      return this.onInbound(message, extra);
    } catch (error) {
      this.core.fail('inbound', error);
      return undefined;
    }
  }

  outbound(message: unknown): void {
    try {
      if (!isResponse(message)) return;
      const entry = this.take(message.id);
      if (entry === undefined) return;
      this.core.lastRecordedAnswer = message;
      this.finish(entry, readOutcome(message, this.core.limits));
    } catch (error) {
      this.core.fail('outbound', error);
    }
  }

  failed(error: unknown): void {
    this.core.fail('tap', error);
  }

  closed(): void {
    try {
      for (const entry of this.pending.values()) this.finish(entry, { outcome: OUTCOME.cancelled });
      for (const queue of this.reused.values()) for (const entry of queue) this.finish(entry, { outcome: OUTCOME.cancelled });
      this.pending.clear();
      this.reused.clear();
    } catch (error) {
      this.core.fail('close', error);
    }
  }

  private onInbound(message: unknown, extra: unknown): Context | undefined {
    if (!isRequest(message)) {
      const cancelled = cancelledRequestId(message);
      if (cancelled !== undefined) {
        const entry = this.take(cancelled);
        if (entry !== undefined) this.finish(entry, { outcome: OUTCOME.cancelled });
      }
      return undefined;
    }
    markReached();
    const facts = readRequest(message, this.core.legacy.get(this.server), this.core.limits, protocolVersionHeader, extra);
    if (this.pending.size >= MAX_PENDING) {
      this.core.fail('pending_overflow', undefined);
      return undefined;
    }
    const started = this.core.startSpan(facts, message);
    const entry: Pending = { facts, span: started?.span };
    if (!this.pending.has(facts.id)) this.pending.set(facts.id, entry);
    else {
      const queue = this.reused.get(facts.id);
      if (queue === undefined) this.reused.set(facts.id, [entry]);
      else queue.push(entry);
    }
    return started?.context;
  }

  private take(id: string | number): Pending | undefined {
    const entry = this.pending.get(id);
    if (entry === undefined) return undefined;
    const queue = this.reused.size === 0 ? undefined : this.reused.get(id);
    const next = queue?.shift();
    if (next === undefined) this.pending.delete(id);
    else {
      this.pending.set(id, next);
      if (queue!.length === 0) this.reused.delete(id);
    }
    return entry;
  }

  private finish(entry: Pending, outcome: ReturnType<typeof readOutcome>): void {
    const facts = outcome.protocolVersion === undefined ? entry.facts : { ...entry.facts, protocolVersion: outcome.protocolVersion };
    if (facts.method === 'initialize' && facts.era === ERA.legacy && outcome.outcome === OUTCOME.complete) {
      this.core.legacy.set(this.server, {
        client: facts.client,
        clientName: facts.clientName,
        clientVersion: facts.clientVersion,
        protocolVersion: facts.protocolVersion,
      });
    }
    const sessionId = typeof this.transport.sessionId === 'string' ? this.transport.sessionId : undefined;
    this.core.record({ facts, server: this.view, outcome }, entry.span, sessionId);
  }
}
