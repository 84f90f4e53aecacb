import { OUTCOME } from '../../contract/index.js';
import { type HandshakeSlot, CANCELLED, isRequest } from '../observe/request-facts.js';
import type { ServerAdvertisement } from '../observe/server-advertisement.js';
import { type WireRecording, WireConnection } from './connection.js';
import type { ByteBudget } from './byte-budget.js';
import { AnswerFrames, BodyFrames } from './frames.js';
import { UNKNOWN_DECLARATION } from '../observe/extension-map.js';

/** 2025-era sessions remembered at once (their `initialize` and server); the oldest is forgotten first. */
const MAX_SESSIONS = 10_000;

interface Session {
  handshake: HandshakeSlot;
  server: ServerAdvertisement | undefined;
}

/**
 * What a 2025-era session (`Mcp-Session-Id`) keeps across its HTTP exchanges, as the server instance behind it
 * does: the client's `initialize` and the server's answer to it. Bounded: the oldest session is forgotten first.
 */
export class HttpSessions {
  private readonly sessions = new Map<string, Session>();

  get(sessionId: string | undefined): Session | undefined {
    return sessionId === undefined ? undefined : this.sessions.get(sessionId);
  }

  remember(sessionId: string | undefined, handshake: HandshakeSlot, server: ServerAdvertisement | undefined): void {
    if (sessionId === undefined) return;
    if (handshake.handshake === undefined && server === undefined) return;
    const known = this.sessions.get(sessionId);
    if (known !== undefined) {
      known.server = server ?? known.server;
      return;
    }
    if (this.sessions.size >= MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
    this.sessions.set(sessionId, { handshake, server });
  }
}

/** What an exchange's request headers say about its conversation. */
export interface ExchangeHeaders {
  /** `Mcp-Session-Id`. */
  sessionId?: string | undefined;
  /** `MCP-Protocol-Version`. */
  protocolVersion?: string | undefined;
}

export interface ExchangeOptions {
  /** Whether recording is still this exchange's job. */
  active?: () => boolean;
  /**
   * The server assumed when the session knows none (a proxy's upstream, learned from earlier answers), asked
   * when the server receives the request.
   */
  server?: () => ServerAdvertisement | undefined;
  /** Bytes kept for parsing, shared with every other exchange (by default each is bounded on its own only). */
  budget?: ByteBudget;
}

/** Counted in `extscope.agent.errors` when a body was too large to keep for reading (it passed unread). */
const STAGE_REQUEST_UNREAD = 'wire_request_unread';
const STAGE_ANSWER_UNREAD = 'wire_answer_unread';

const isSuccess = (status: number): boolean => status >= 200 && status < 300;
const isRedirect = (status: number): boolean => status >= 300 && status < 400;

/**
 * One MCP POST and its answer, as bytes: the request body is read when complete (bounded), the answer (JSON or
 * SSE) as it streams. One exchange is one {@link WireConnection}; a 2025-era session shares its `initialize` and
 * server across exchanges through {@link HttpSessions}. Used by the in-process wire fallback (`node:http`) and
 * by `extscope proxy`, which see the same bytes from two sides.
 */
export class HttpExchange {
  private readonly session: Session | undefined;
  private readonly handshake: HandshakeSlot;
  private readonly body: BodyFrames;
  private readonly answer: AnswerFrames;
  private made: WireConnection | undefined;
  private settled = false;
  /** The answer carried a JSON-RPC message: it is an MCP answer, whatever its status. */
  private answeredMessage = false;

  constructor(
    private readonly sessions: HttpSessions,
    private readonly recording: WireRecording,
    private readonly headers: ExchangeHeaders,
    private readonly options: ExchangeOptions = {},
  ) {
    this.session = sessions.get(headers.sessionId);
    this.handshake = this.session?.handshake ?? { handshake: undefined };
    this.body = new BodyFrames(options.budget?.account());
    this.answer = new AnswerFrames((message) => {
      this.answeredMessage = true;
      this.connection.outbound(message);
    }, options.budget?.account());
  }

  /** Made when first needed, so the server it assumes is the one known when the request reached it. */
  private get connection(): WireConnection {
    if (this.made !== undefined) return this.made;
    const { headers, options, recording } = this;
    // One literal of a fixed shape: spreads of optional parts made an object each, per exchange.
    this.made = new WireConnection(recording.pipeline, recording, recording.advertisements, {
      handshake: this.handshake,
      server: this.session?.server ?? options.server?.(),
      sessionId: headers.sessionId,
      active: options.active,
      protocolVersionHeader: headers.protocolVersion,
    });
    return this.made;
  }

  /** A chunk of the request body (decoded: no content encoding). */
  requestChunk(chunk: unknown, encoding?: unknown): void {
    if (!this.settled) this.body.push(chunk, encoding);
  }

  /** The request body was too large to keep: the rest of it need not be decoded. */
  get requestSkipped(): boolean {
    return this.body.skipped;
  }

  /** The answer is no longer read (too large to keep, or settled): the rest of it need not be decoded. */
  get answerSkipped(): boolean {
    return this.settled || this.answer.skipped;
  }

  /** The request body as JSON (once it is complete), `undefined` when it is not JSON or too large. */
  requestBody(): unknown {
    const body = this.body.end();
    if (this.body.skipped) this.recording.pipeline.count(STAGE_REQUEST_UNREAD);
    return body;
  }

  /** The server received `message` (the parsed body): its requests are in flight from now on. */
  received(message: unknown): void {
    this.body.release();
    this.connection.inbound(message);
  }

  /** A chunk of the answer body (decoded: no content encoding). */
  answerChunk(chunk: unknown, encoding?: unknown): void {
    if (!this.settled) this.answer.push(chunk, encoding);
  }

  /**
   * The exchange ended: `finished` when the answer was complete (else the requests in flight were cancelled),
   * with the HTTP status (`undefined`: no answer began, e.g. the client left while a tool hung) and the session id
   * the answer set (a 2025-era `initialize` starts a session). An answer that is no MCP answer (a redirect, or an
   * error status whose body carries no JSON-RPC message: a 404 page of another path, an auth layer's 401) ends
   * the requests without counting them: the MCP server did not answer them.
   */
  settle(finished: boolean, status: number | undefined, answerSessionId: string | undefined): void {
    if (this.settled) return;
    this.settled = true;
    this.body.release();
    this.answer.end();
    if (this.answer.skipped) this.recording.pipeline.count(STAGE_ANSWER_UNREAD);
    if (status !== undefined && !isSuccess(status) && (isRedirect(status) || !this.answeredMessage)) {
      this.made?.forget();
      return;
    }
    const outcome =
      !finished || status === undefined
        ? CANCELLED
        : (this.made?.anonymousError ?? (isSuccess(status) ? CANCELLED : { outcome: OUTCOME.error, errorCode: status, errorMessage: `HTTP ${status}` }));
    this.made?.settle(outcome);
    this.sessions.remember(answerSessionId ?? this.headers.sessionId, this.handshake, this.made?.knownServer);
  }

  /** The request never reached the server (the upstream was unreachable): nothing is counted, nothing kept. */
  discard(): void {
    if (this.settled) return;
    this.settled = true;
    this.body.release();
    this.answer.end();
    this.made?.forget();
  }
}

/** `server` when what it advertises is known (not only who it is). */
export function advertised(server: ServerAdvertisement | undefined): ServerAdvertisement | undefined {
  return server === undefined || server.extensions === UNKNOWN_DECLARATION ? undefined : server;
}

/** Whether a parsed body carries MCP requests (one, or a batch starting with one). */
export function carriesRequests(message: unknown): boolean {
  return isRequest(Array.isArray(message) ? message[0] : message);
}
