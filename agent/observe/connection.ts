import type { Context } from '@opentelemetry/api';
import type { SessionTransport } from '../internal-types.js';
import type { EntryReach } from './entry-exchange.js';
import { type Pending, type RequestSink, RequestPairing } from './pairing.js';
import {
  CANCELLED,
  type HandshakeSlot,
  type JsonRpcRequest,
  type Outcome,
  answeredFacts,
  isRequest,
  isResponse,
  readOutcome,
  readRequest,
} from './request-facts.js';
import type { ServerAdvertisement } from './server-advertisement.js';

/**
 * One server object on one transport: pairs each inbound request with its answer and hands both to the sink,
 * and tells the entry the server was built for (if any) which requests reached it. A 2025-era `initialize`
 * answered here is kept in the server object's handshake slot, for the legacy requests that follow on it (on
 * this connection or a later one of the same object).
 */
export class Connection {
  private readonly pairing: RequestPairing;

  constructor(
    private readonly sink: RequestSink,
    private readonly entry: EntryReach,
    private readonly server: ServerAdvertisement,
    private readonly handshake: HandshakeSlot,
    private readonly transport: SessionTransport,
  ) {
    this.pairing = new RequestPairing(sink);
  }

  /** An inbound message, before the SDK dispatches it; returns the context to dispatch it in (its span's). */
  inbound(message: unknown, extra: unknown): Context | undefined {
    try {
      if (isRequest(message)) return this.received(message, extra);
      const pending = this.pairing.cancelled(message);
      if (pending !== undefined) this.finish(pending, CANCELLED);
    } catch (error) {
      this.sink.fail('inbound', error);
    }
    return undefined;
  }

  outbound(message: unknown): void {
    try {
      if (!isResponse(message)) return;
      const pending = this.pairing.answered(message.id);
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
      for (const pending of this.pairing.drain()) this.finish(pending, CANCELLED);
    } catch (error) {
      this.sink.fail('close', error);
    }
  }

  private received(message: JsonRpcRequest, extra: unknown): Context | undefined {
    this.entry.reached(message.id, extra);
    return this.pairing.received(readRequest(message, this.handshake, this.sink.reading, extra))?.context;
  }

  private finish(pending: Pending, outcome: Outcome): void {
    const facts = answeredFacts(pending.facts, outcome, this.handshake);
    const sessionId = typeof this.transport.sessionId === 'string' ? this.transport.sessionId : undefined;
    this.sink.finish(facts, this.server, outcome, pending.span, sessionId);
  }
}
