import type { Context, Span } from '@opentelemetry/api';
import type { MessageExtra, SessionTransport } from '../internal-types.js';
import { HEADER_PROTOCOL_VERSION } from '../mcp-protocol.js';
import type { EntryReach } from './entry-exchange.js';
import { InFlight } from './in-flight.js';
import {
  CANCELLED,
  type HandshakeSlot,
  type JsonRpcRequest,
  type Outcome,
  type RequestFacts,
  type RequestReading,
  answeredFacts,
  cancelledRequestId,
  isRequest,
  isResponse,
  readOutcome,
  readRequest,
} from './request-facts.js';
import type { ServerAdvertisement } from './server-advertisement.js';

/** A request whose span was started: the span, and the context to dispatch the request in. */
export interface StartedRequest {
  span: Span;
  context: Context;
}

/** Where a connection hands the requests it pairs with their answers (the request pipeline). */
export interface RequestSink {
  readonly reading: RequestReading;
  /** Called when a request arrives; `undefined` when no span is made. */
  start(facts: RequestFacts): StartedRequest | undefined;
  finish(facts: RequestFacts, server: ServerAdvertisement | undefined, outcome: Outcome, span: Span | undefined, sessionId: string | undefined): void;
  /** Counts an internal error (the agent never throws into the application). */
  fail(stage: string, error: unknown): void;
}

interface Pending {
  facts: RequestFacts;
  span: Span | undefined;
}

/** The `MCP-Protocol-Version` header an HTTP transport passed with the message, if any. */
function protocolVersionHeader(extra: unknown): string | undefined {
  if (typeof extra !== 'object' || extra === null) return undefined;
  const { request, requestInfo } = extra as MessageExtra;
  const webHeaders = request?.headers;
  if (typeof webHeaders?.get === 'function') return webHeaders.get(HEADER_PROTOCOL_VERSION) ?? undefined;
  const value = requestInfo?.headers?.[HEADER_PROTOCOL_VERSION];
  return typeof value === 'string' ? value : undefined;
}

/** Per pipeline, the reading its connections use (the same for all: built once, not per connection). */
const connectionReadings = new WeakMap<RequestReading, RequestReading>();
/** The last one looked up: a process has one pipeline, and a connection per HTTP request then skips the lookup. */
let lastReading: { of: RequestReading; withHint: RequestReading } | undefined;

function connectionReading(reading: RequestReading): RequestReading {
  if (lastReading?.of === reading) return lastReading.withHint;
  let withHint = connectionReadings.get(reading);
  if (withHint === undefined) {
    withHint = { ...reading, protocolVersionHint: protocolVersionHeader };
    connectionReadings.set(reading, withHint);
  }
  lastReading = { of: reading, withHint };
  return withHint;
}

/**
 * One server object on one transport: pairs each inbound request with its answer and hands both to the sink,
 * and tells the entry the server was built for (if any) which requests reached it. A 2025-era `initialize`
 * answered here is kept in the server object's handshake slot, for the legacy requests that follow on it (on
 * this connection or a later one of the same object).
 */
export class Connection {
  private readonly inFlight = new InFlight<Pending>();
  private readonly reading: RequestReading;

  constructor(
    private readonly sink: RequestSink,
    private readonly entry: EntryReach,
    private readonly server: ServerAdvertisement,
    private readonly handshake: HandshakeSlot,
    private readonly transport: SessionTransport,
  ) {
    this.reading = connectionReading(sink.reading);
  }

  /** An inbound message, before the SDK dispatches it; returns the context to dispatch it in (its span's). */
  inbound(message: unknown, extra: unknown): Context | undefined {
    try {
      if (isRequest(message)) return this.received(message, extra);
      const cancelled = cancelledRequestId(message);
      if (cancelled !== undefined) {
        const pending = this.inFlight.take(cancelled);
        if (pending !== undefined) this.finish(pending, CANCELLED);
      }
    } catch (error) {
      this.sink.fail('inbound', error);
    }
    return undefined;
  }

  outbound(message: unknown): void {
    try {
      if (!isResponse(message)) return;
      const pending = this.inFlight.take(message.id);
      if (pending !== undefined) this.finish(pending, readOutcome(message, this.reading.limits));
    } catch (error) {
      this.sink.fail('outbound', error);
    }
  }

  /** The transport's callbacks could not be wrapped: it runs unobserved. */
  failed(error: unknown): void {
    this.sink.fail('tap', error);
  }

  /** The transport closed: requests still in flight will get no answer. */
  closed(): void {
    try {
      for (const pending of this.inFlight.drain()) this.finish(pending, CANCELLED);
    } catch (error) {
      this.sink.fail('close', error);
    }
  }

  private received(message: JsonRpcRequest, extra: unknown): Context | undefined {
    this.entry.reached(message.id, extra);
    const facts = readRequest(message, this.handshake, this.reading, extra);
    if (this.inFlight.full) {
      this.sink.fail('pending_overflow', undefined);
      return undefined;
    }
    const started = this.sink.start(facts);
    this.inFlight.add(facts.id, { facts, span: started?.span });
    return started?.context;
  }

  private finish(pending: Pending, outcome: Outcome): void {
    const facts = answeredFacts(pending.facts, outcome, this.handshake);
    const sessionId = typeof this.transport.sessionId === 'string' ? this.transport.sessionId : undefined;
    this.sink.finish(facts, this.server, outcome, pending.span, sessionId);
  }
}
