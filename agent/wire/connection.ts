import { META_SERVER_INFO, METHOD_INITIALIZE, METHOD_SERVER_DISCOVER } from '../mcp-protocol.js';
import { UNKNOWN_DECLARATION } from '../observe/extension-map.js';
import { type Pending, type RequestSink, RequestPairing } from '../observe/pairing.js';
import {
  CANCELLED,
  type HandshakeSlot,
  type Outcome,
  type RequestReading,
  answeredFacts,
  isRequest,
  isResponse,
  readOutcome,
  readRequest,
} from '../observe/request-facts.js';
import type { ServerIdentity } from '../types.js';
import type { ServerAdvertisement, ServerAdvertisements } from '../observe/server-advertisement.js';
import { asRecord } from '../observe/untrusted.js';

/** Where a wire connection reports what a server's own answers said about it. */
export interface WireServerSink {
  /** A server answered `initialize` or `server/discover`: what it advertises (for the gauges, the first-server hook). */
  announce(server: ServerAdvertisement): void;
  /**
   * A request is recorded for a server known by name at most (a 2026-07-28 result names its server in `_meta`,
   * but only `server/discover` says what it advertises): the first-server hook runs, the gauges learn nothing.
   */
  identify(identity: ServerIdentity): void;
}

/** What one conversation starts with, beyond the sinks. */
export interface WireConversation {
  /** The `initialize` slot (an HTTP session shares it across its exchanges); a fresh one by default. */
  handshake?: HandshakeSlot;
  /** The server learned earlier on the same session, if any. */
  server?: ServerAdvertisement;
  sessionId?: string;
  /** Whether recording is still this connection's job (an SDK copy patched later takes over). */
  active?: () => boolean;
  /**
   * The revision the transport states for the conversation (HTTP's `MCP-Protocol-Version` header): all a
   * 2025-era request without its `initialize` tells about itself besides its method.
   */
  protocolVersionHeader?: string;
  /**
   * What a server that named itself was last heard to advertise in an earlier conversation of the same server
   * (its `server/discover` or `initialize` answer there), for a conversation where it only names itself: a client
   * that probed in a first process reuses that answer in the next, and so may the reader. Undefined: unknown.
   */
  rememberedCapabilities?: (serverInfo: Record<string, unknown>) => Record<string, unknown> | undefined;
  /** Told each server answer that names a server and what it advertises, to remember for later conversations. */
  remember?: (serverInfo: Record<string, unknown>, capabilities: Record<string, unknown>) => void;
}

/** Where a wire reader records what it saw: the pipeline, and what servers said about themselves. */
export interface WireRecording extends WireServerSink {
  readonly pipeline: RequestSink;
  readonly advertisements: ServerAdvertisements;
}

const ALWAYS = (): boolean => true;

/** Per pipeline reading, the one whose hint is the `MCP-Protocol-Version` header passed with each message. */
const headerReadings = new WeakMap<RequestReading, RequestReading>();

/**
 * `reading`, with the revision of a legacy request without its `initialize` read from the header its connection
 * passes as `extra`: made once per pipeline, not per connection (an HTTP exchange is one).
 */
function headerReading(reading: RequestReading): RequestReading {
  let hinted = headerReadings.get(reading);
  if (hinted === undefined) {
    hinted = { ...reading, protocolVersionHint: (header) => (typeof header === 'string' ? header : undefined) };
    headerReadings.set(reading, hinted);
  }
  return hinted;
}

/** A server known by who it is, not by what it advertises. */
const withoutAdvertisement = (server: ServerAdvertisement): ServerAdvertisement => ({
  ...server,
  extensions: UNKNOWN_DECLARATION,
  ids: new Set(),
  fingerprints: [],
});

/**
 * One conversation seen on the wire only (a stdio pair of streams, one HTTP exchange or session), for servers
 * whose SDK copy could not be patched. The same per-request semantics as {@link Connection}, with one
 * difference: no server object can be asked what it advertises, so the server's map is read from its own
 * answer to `initialize` (2025 era) or `server/discover` (2026-07-28), and applies to the requests answered on
 * this conversation from then on. Requests answered before that (a rejected probe) have no known server.
 */
export class WireConnection {
  private readonly pairing: RequestPairing;
  private readonly reading: RequestReading;
  private readonly handshake: HandshakeSlot;
  private readonly active: () => boolean;
  private server: ServerAdvertisement | undefined;

  constructor(
    private readonly sink: RequestSink,
    private readonly servers: WireServerSink,
    private readonly advertisements: ServerAdvertisements,
    private readonly conversation: WireConversation = {},
  ) {
    this.reading = conversation.protocolVersionHeader === undefined ? sink.reading : headerReading(sink.reading);
    this.handshake = conversation.handshake ?? { handshake: undefined };
    this.active = conversation.active ?? ALWAYS;
    this.server = conversation.server;
    this.pairing = new RequestPairing(sink);
  }

  /** The server this conversation learned from an answer, if any (an HTTP session keeps it across exchanges). */
  get knownServer(): ServerAdvertisement | undefined {
    return this.server;
  }

  /** A message the client sent: one JSON-RPC message or a batch. */
  inbound(message: unknown): void {
    try {
      if (Array.isArray(message)) for (const item of message) this.inboundOne(item);
      else this.inboundOne(message);
    } catch (error) {
      this.sink.fail('wire_inbound', error);
    }
  }

  /** A message the server sent: one JSON-RPC message or a batch. */
  outbound(message: unknown): void {
    try {
      if (Array.isArray(message)) for (const item of message) this.outboundOne(item);
      else this.outboundOne(message);
    } catch (error) {
      this.sink.fail('wire_outbound', error);
    }
  }

  /** Requests still in flight will get no answer on this conversation. */
  closed(): void {
    this.settle(CANCELLED);
  }

  /**
   * The conversation ended (an HTTP exchange: the answer is complete): the requests still in flight got
   * `outcome`, e.g. what the HTTP status or an error answered with `id: null` said.
   */
  settle(outcome: Outcome): void {
    try {
      for (const pending of this.pairing.drain()) this.finish(pending, outcome);
    } catch (error) {
      this.sink.fail('wire_close', error);
    }
  }

  /** The requests in flight were not MCP requests after all (the answer was not the server's): none is recorded. */
  forget(): void {
    this.pairing.drain();
  }

  /** An error the server answered with `id: null` (it could not read the request), if one went out. */
  get anonymousError(): Outcome | undefined {
    return this.nullIdError;
  }

  private nullIdError: Outcome | undefined;

  private inboundOne(message: unknown): void {
    if (isRequest(message)) {
      this.pairing.received(readRequest(message, this.handshake, this.reading, this.conversation.protocolVersionHeader), this.active());
      return;
    }
    const pending = this.pairing.cancelled(message);
    if (pending !== undefined) this.finish(pending, CANCELLED);
  }

  private outboundOne(message: unknown): void {
    if (!isResponse(message)) {
      const record = asRecord(message);
      if (record !== undefined && record['id'] === null && asRecord(record['error']) !== undefined)
        this.nullIdError = readOutcome(record, this.sink.reading.limits);
      return;
    }
    const pending = this.pairing.answered(message.id);
    if (pending === undefined) return;
    const { method } = pending.facts;
    const result = asRecord(message['result']);
    if (result !== undefined) {
      if (method === METHOD_INITIALIZE || method === METHOD_SERVER_DISCOVER) this.learnServer(result);
      else if (this.server === undefined) this.learnIdentity(result);
    }
    this.finish(pending, readOutcome(message, this.sink.reading.limits));
  }

  /** The server's own answer names it and what it advertises: `initialize` result, or `server/discover` result. */
  private learnServer(result: Record<string, unknown>): void {
    const serverInfo = asRecord(result['serverInfo']) ?? asRecord(asRecord(result['_meta'])?.[META_SERVER_INFO]);
    const capabilities = asRecord(result['capabilities']);
    const server = this.advertisements.read({ getCapabilities: () => capabilities, _serverInfo: serverInfo });
    // No capabilities in the answer: who answered is known, what it advertises is not.
    this.server = capabilities === undefined ? withoutAdvertisement(server) : server;
    if (capabilities !== undefined && serverInfo !== undefined) this.conversation.remember?.(serverInfo, capabilities);
    if (this.active()) this.servers.announce(this.server);
  }

  /**
   * A 2026-07-28 result names its server in `_meta` (every result does): who answers is known from then on,
   * what it advertises is not (a client may reuse a `server/discover` answer from an earlier connection).
   */
  private learnIdentity(result: Record<string, unknown>): void {
    const serverInfo = asRecord(asRecord(result['_meta'])?.[META_SERVER_INFO]);
    if (serverInfo === undefined) return;
    const remembered = this.conversation.rememberedCapabilities?.(serverInfo);
    if (remembered !== undefined) {
      this.server = this.advertisements.read({ getCapabilities: () => remembered, _serverInfo: serverInfo });
      if (this.active()) this.servers.announce(this.server);
      return;
    }
    this.server = this.advertisements.identified(serverInfo);
  }

  private finish(pending: Pending, outcome: Outcome): void {
    const facts = answeredFacts(pending.facts, outcome, this.handshake);
    if (!this.active()) {
      pending.span?.end();
      return;
    }
    // The first request recorded starts the export (the zero-code SDK), whether or not a server was named.
    this.servers.identify(this.server?.identity ?? {});
    this.sink.finish(facts, this.server, outcome, pending.span, this.conversation.sessionId);
  }
}
