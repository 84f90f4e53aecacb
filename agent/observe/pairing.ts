import type { Context, Span } from '@opentelemetry/api';
import { InFlight } from './in-flight.js';
import { type Outcome, type RequestFacts, type RequestId, type RequestReading, cancelledRequestId } from './request-facts.js';
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
  /** Counts, without logging, a case the agent could not read (e.g. a body too large to keep). */
  count(stage: string): void;
}

/** A request waiting for its answer: what was read of it, and its span if one was started. */
export interface Pending {
  facts: RequestFacts;
  span: Span | undefined;
}

/**
 * Requests paired with their answers, for every kind of connection (a transport tapped inside the SDK, a
 * conversation read off the wire): a request is kept from its arrival until its answer, its cancellation or the
 * connection's end, at most {@link InFlight}'s bound of them.
 */
export class RequestPairing {
  private readonly inFlight = new InFlight<Pending>();

  constructor(private readonly sink: RequestSink) {}

  /**
   * A request arrived: kept, with its span started when `record` (the sink decides whether one is made). Past the
   * bound it is not kept (counted as the agent's internal error) and nothing is started.
   */
  received(facts: RequestFacts, record = true): StartedRequest | undefined {
    if (this.inFlight.full) {
      this.sink.fail('pending_overflow', undefined);
      return undefined;
    }
    const started = record ? this.sink.start(facts) : undefined;
    this.inFlight.add(facts.id, { facts, span: started?.span });
    return started;
  }

  /** The request an answer with this id ends, if it is kept. */
  answered(id: RequestId): Pending | undefined {
    return this.inFlight.take(id);
  }

  /** The request a `notifications/cancelled` message ends, if it is one and the request is kept. */
  cancelled(message: unknown): Pending | undefined {
    const id = cancelledRequestId(message);
    return id === undefined ? undefined : this.inFlight.take(id);
  }

  /** Every request still kept: none will get an answer on this connection. */
  drain(): Pending[] {
    return this.inFlight.drain();
  }
}
