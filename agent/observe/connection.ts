import type { Context, Span } from '@opentelemetry/api';
import type { SessionTransport } from '../internal-types.js';
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

/**
 * One server object on one transport: pairs each inbound request with its answer and hands both to the sink,
 * and tells the entry the server was built for (if any) which requests reached it. A 2025-era `initialize`
 * answered here is kept in the server object's handshake slot, for the legacy requests that follow on it (on
 * this connection or a later one of the same object).
 */
export class Connection {
  private readonly inFlight = new InFlight<Pending>();

  constructor(
    private readonly sink: RequestSink,
    private readonly entry: EntryReach,
    private readonly server: ServerAdvertisement,
    private readonly handshake: HandshakeSlot,
    private readonly transport: SessionTransport,
  ) {}

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
      if (pending !== undefined) this.finish(pending, readOutcome(message, this.sink.reading.limits));
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
    const facts = readRequest(message, this.handshake, this.sink.reading, extra);
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
