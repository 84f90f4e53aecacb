import type { Socket } from 'node:net';
import type { ByteBudget } from '../wire/byte-budget.js';
import { BodyFraming, FramingError } from './body-framing.js';
import { RelayedExchange, Told } from './relayed-exchange.js';
import { answerHeadRewritten, requestHeadRewritten } from './head-rewrites.js';
import { BodyKind, type Head, HeadError, MAX_HEAD_BYTES, requestHead, responseHead, responseHasBody } from './http-head.js';
import type { ProxyDeadlines } from './options.js';
import type { ProxiedExchange } from './proxied-exchange.js';
import type { UpstreamTarget } from './upstream-target.js';
import { Valve } from './valve.js';

const HEAD_END = Buffer.from('\r\n\r\n');

/** What every relayed connection shares: the proxy's settings, the recorder, and a clock the deadline sweep sets. */
export interface RelayContext {
  readonly upstream: UpstreamTarget;
  readonly deadlines: ProxyDeadlines;
  readonly budget: ByteBudget;
  /** A new connection to the upstream (plain or TLS). */
  connect(): Socket;
  /** The recording of an MCP POST. */
  flow(head: Head, valve: Valve): ProxiedExchange;
  log(line: string): void;
  /** The proxy's own URL, for a `Location` rewrite when the client's `Host` cannot name it. */
  readonly ownUrl: string;
  /** Milliseconds, set by the deadline sweep on each of its ticks (a coarse clock: no call per request). */
  readonly now: number;
  /** The client connection closed (everything in flight on it ended). */
  closed(connection: RelayedConnection): void;
}

/**
 * One client connection relayed byte for byte to a connection of its own to the upstream (opened at its first
 * request, again after the upstream closed it): every byte passes unchanged both ways but a request's target and
 * `Host` (and credentials the client did not send), and `Location`s naming the upstream. Beside the bytes, each
 * message's head and framing are read (heads, lengths, chunks) to hand each MCP POST's body and its answer's to
 * the recorder, to keep pipelined requests and their answers in order, and to enforce the deadlines. After a `101
 * Switching Protocols` both directions are piped and nothing is read.
 */
export class RelayedConnection {
  private upstream: Socket | undefined;
  /** The upstream connection carried an exchange to its end already: a close before an answer may be a stale one. */
  private reused = false;
  /** In flight, oldest first: the first is the one the upstream answers next. */
  private readonly exchanges: RelayedExchange[] = [];
  /** The request whose body is still coming from the client. */
  private sending: RelayedExchange | undefined;
  private readonly requestBody = new BodyFraming();
  private readonly answerBody = new BodyFraming();
  private requestHeadPart: Buffer | undefined;
  private answerHeadPart: Buffer | undefined;
  /** When the request now coming began (the clock's ms), `-1` when none is. */
  private requestStarted = -1;
  private lastActive: number;
  /** Client bytes after a request asking to upgrade, held until its answer says whether they are HTTP. */
  private held: Buffer[] | undefined;
  private tunnel = false;
  /** The proxy answered the client itself and ends the connection: the client's bytes are not read any more. */
  private ending = false;
  private clientEnded = false;
  private closed = false;
  private holdingForUpstream = false;
  private holdingForClient = false;
  /**
   * A client chunk is being read: what it sends upstream (a rewritten head, the body after it) is gathered in
   * `batch` and goes to `batchTarget` in one write once the chunk was read, before anything is recorded.
   */
  private batching = false;
  private readonly batch: (Buffer | string)[] = [];
  private batchTarget: Socket | undefined;
  /**
   * What the recorder is to be told, as flat triples (what, exchange, payload), told once the bytes they came in
   * were written on: reading an exchange (making its recording, parsing its JSON, counting) never holds its bytes
   * back, and the order of what the recorder hears is the order it happened in. One array for the connection, reused.
   */
  private readonly records: (Told | RelayedExchange | Buffer | undefined)[] = [];
  private readonly valve: Valve;

  constructor(
    private readonly client: Socket,
    private readonly context: RelayContext,
  ) {
    this.lastActive = context.now;
    this.valve = new Valve(client);
    client.on('data', this.fromClient);
    client.on('end', this.clientEnd);
    client.on('error', noop);
    client.once('close', this.clientClosed);
    client.on('drain', this.clientDrained);
  }

  /** The deadlines, checked on the sweep's tick: a request's head, its whole, and an idle connection. */
  check(now: number): void {
    if (this.closed || this.tunnel) return;
    const { headersMs, bodyMs, idleMs } = this.context.deadlines;
    if (this.ending) {
      if (now - this.lastActive > headersMs) this.client.destroy();
    } else if (this.requestStarted >= 0) {
      const limit = this.sending === undefined ? headersMs : headersMs + bodyMs;
      if (now - this.requestStarted > limit) this.refuse('408 Request Timeout', undefined);
    } else if (this.exchanges.length === 0 && now - this.lastActive > idleMs) this.client.destroy();
  }

  /** The recordings in flight, for a stopping proxy to wait on. */
  flows(): ProxiedExchange[] {
    const flows: ProxiedExchange[] = [];
    for (const exchange of this.exchanges) if (exchange.flow !== undefined) flows.push(exchange.flow);
    return flows;
  }

  /** The proxy stops: what is in flight ends as if the client left. */
  stop(): void {
    this.client.destroy();
  }

  private readonly fromClient = (chunk: Buffer): void => {
    // A connection being ended is not kept by what its client still sends (the sweep closes it).
    if (this.ending) return;
    this.lastActive = this.context.now;
    if (this.tunnel) return this.toUpstream(chunk);
    if (this.held !== undefined) {
      this.held.push(chunk);
      return;
    }
    // What this chunk sends upstream (a rewritten head, the body after it) goes in one write.
    this.batching = true;
    try {
      this.readRequests(chunk);
    } catch (error) {
      if (!(error instanceof HeadError || error instanceof FramingError)) throw error;
      this.refuse(error instanceof HeadError && error.status === 431 ? '431 Request Header Fields Too Large' : '400 Bad Request', undefined);
    } finally {
      this.batching = false;
      this.sendBatch();
      this.tell();
    }
    const upstream = this.upstream;
    if (upstream !== undefined && !this.holdingForUpstream && upstream.writableNeedDrain) {
      this.holdingForUpstream = true;
      this.valve.hold();
      upstream.once('drain', this.upstreamDrained);
    }
  };

  /** Reads the requests in `chunk`, sending each upstream (its head rewritten, its body as it came). */
  private readRequests(chunk: Buffer): void {
    let pos = 0;
    while (pos < chunk.length && !this.ending) {
      const sending = this.sending;
      if (sending !== undefined) {
        const end = this.requestBody.read(chunk, pos, sending.recorded ? this.requestPayload : undefined);
        this.sendBody(sending, pos === 0 && end === chunk.length ? chunk : chunk.subarray(pos, end));
        pos = end;
        if (this.requestBody.done) this.requestEnded(sending);
        continue;
      }
      if (this.held !== undefined) {
        this.held.push(chunk.subarray(pos));
        return;
      }
      pos = this.readRequestHead(chunk, pos);
    }
  }

  /** Reads a request head from `pos` (or what of it is there); returns where its body starts. */
  private readRequestHead(chunk: Buffer, from: number): number {
    let pos = from;
    // Empty lines before a request line are ignored (RFC 9112 §2.2).
    if (this.requestHeadPart === undefined) while (pos + 1 < chunk.length && chunk[pos] === 0x0d && chunk[pos + 1] === 0x0a) pos += 2;
    if (this.requestStarted < 0) this.requestStarted = this.context.now;
    let bytes = chunk;
    let start = pos;
    if (this.requestHeadPart !== undefined) {
      bytes = Buffer.concat([this.requestHeadPart, chunk.subarray(pos)]);
      start = 0;
    }
    const end = bytes.indexOf(HEAD_END, Math.max(start, bytes === chunk ? start : this.requestHeadPart!.length - 3));
    if (end < 0) {
      if (bytes.length - start > MAX_HEAD_BYTES) throw new HeadError(431, 'head too large');
      this.requestHeadPart = bytes === chunk ? Buffer.from(chunk.subarray(start)) : bytes;
      return chunk.length;
    }
    if (end + 4 - start > MAX_HEAD_BYTES) throw new HeadError(431, 'head too large');
    const consumed = bytes === chunk ? end + 4 : end + 4 - this.requestHeadPart!.length + pos;
    this.requestHeadPart = undefined;
    this.request(requestHead(bytes.toString('latin1', start, end + 4)));
    return consumed;
  }

  /** A request's head: its exchange begins, the head goes upstream with the proxy's rewrites. */
  private request(head: Head): void {
    const { context } = this;
    const path = context.upstream.path(head.target);
    if (path === undefined) {
      this.refuse('400 Bad Request', 'extscope proxy: the request target must be a path (or an absolute http URL, whose path is used)\n');
      return;
    }
    // MCP POSTs are recorded; their recording is made once the head went on (see `tell`).
    const exchange = new RelayedExchange(head, head.first === 'POST', context.budget.account());
    this.exchanges.push(exchange);
    this.record(Told.Began, exchange, undefined);
    this.sendBody(exchange, requestHeadRewritten(head, path, context.upstream));
    this.requestBody.start(head.body, head.length);
    if (head.body === BodyKind.None) this.requestEnded(exchange);
    else this.sending = exchange;
    if (head.upgrade) {
      this.held = [];
      this.valve.hold();
    }
  }

  private readonly requestPayload = (payload: Buffer): void => this.record(Told.RequestChunk, this.sending!, payload);

  private readonly answerPayload = (payload: Buffer): void => this.record(Told.AnswerChunk, this.exchanges[0]!, payload);

  private record(what: Told, exchange: RelayedExchange, payload: Buffer | undefined): void {
    if (exchange.recorded) this.records.push(what, exchange, payload);
  }

  /** Tells the recorder what was recorded (the bytes it came in went on already). */
  private tell(): void {
    const { records } = this;
    for (let i = 0; i < records.length; i += 3) {
      const exchange = records[i + 1] as RelayedExchange;
      const flow = (exchange.flow ??= this.context.flow(exchange.head, this.valve));
      switch (records[i] as Told) {
        case Told.Began:
          break;
        case Told.RequestChunk:
          flow.requestChunk(records[i + 2] as Buffer);
          break;
        case Told.RequestEnded:
          flow.requestEnded();
          break;
        case Told.Answered:
          flow.answered(exchange.answer!.contentEncoding);
          break;
        case Told.AnswerChunk:
          flow.answerChunk(records[i + 2] as Buffer);
          break;
        case Told.AnswerEnded:
        case Told.AnswerCut:
          flow.answerEnded(records[i] === Told.AnswerEnded, exchange.answer!.status, exchange.answer!.sessionId);
          break;
      }
    }
    records.length = 0;
  }

  private sendBody(exchange: RelayedExchange, piece: Buffer | string): void {
    exchange.keep(piece);
    this.toUpstream(piece);
  }

  private requestEnded(exchange: RelayedExchange): void {
    exchange.requestDone = true;
    this.sending = undefined;
    this.requestStarted = -1;
    this.record(Told.RequestEnded, exchange, undefined);
  }

  private toUpstream(piece: Buffer | string): void {
    const upstream = this.upstreamSocket();
    if (!this.batching) return write(upstream, piece);
    if (this.batchTarget !== upstream) this.sendBatch();
    this.batchTarget = upstream;
    this.batch.push(piece);
  }

  private sendBatch(): void {
    const target = this.batchTarget;
    this.batchTarget = undefined;
    // A connection destroyed meanwhile (the request was refused) takes nothing more.
    if (target !== undefined && !target.destroyed) send(target, this.batch);
    this.batch.length = 0;
  }

  private upstreamSocket(): Socket {
    if (this.upstream !== undefined) return this.upstream;
    const upstream = this.context.connect();
    this.upstream = upstream;
    this.reused = false;
    upstream.on('data', (chunk: Buffer) => this.fromUpstream(upstream, chunk));
    let failure: NodeJS.ErrnoException | undefined;
    upstream.on('error', (error: NodeJS.ErrnoException) => (failure ??= error));
    upstream.once('close', () => this.upstreamClosed(upstream, failure));
    return upstream;
  }

  private fromUpstream(upstream: Socket, chunk: Buffer): void {
    if (upstream !== this.upstream || this.closed) return;
    if (this.tunnel) return this.toClient(chunk);
    try {
      this.readAnswers(chunk);
    } catch (error) {
      if (!(error instanceof HeadError || error instanceof FramingError)) throw error;
      // The upstream's answer cannot be read: relayed no further (a 502 when none of it went out yet).
      this.upstreamFailed(upstream, error.message);
      return;
    }
    this.tell();
    if (!this.holdingForClient && this.client.writableNeedDrain) {
      this.holdingForClient = true;
      upstream.pause();
    }
  }

  private readAnswers(chunk: Buffer): void {
    let pos = 0;
    // Spans of `chunk` that pass unchanged go out as one write: a whole answer is usually one chunk, one write.
    let unsent = 0;
    while (pos < chunk.length) {
      const exchange = this.exchanges[0];
      if (exchange === undefined) throw new FramingError('an answer to no request');
      if (exchange.answer !== undefined) {
        pos = this.answerBody.read(chunk, pos, exchange.recorded ? this.answerPayload : undefined);
        if (this.answerBody.done) {
          if (pos > unsent) this.toClient(chunk.subarray(unsent, pos));
          unsent = pos;
          this.answerEnded(exchange, true);
          if (this.closed || this.ending) return;
        }
        continue;
      }
      let bytes = chunk;
      let start = pos;
      if (this.answerHeadPart !== undefined) {
        bytes = Buffer.concat([this.answerHeadPart, chunk.subarray(pos)]);
        start = 0;
      }
      const end = bytes.indexOf(HEAD_END, start);
      if (end < 0) {
        if (bytes.length - start > MAX_HEAD_BYTES) throw new HeadError(502, 'answer head too large');
        this.answerHeadPart = bytes === chunk ? Buffer.from(chunk.subarray(start)) : bytes;
        if (pos > unsent) this.toClient(chunk.subarray(unsent, pos));
        return;
      }
      const head = responseHead(bytes.toString('latin1', start, end + 4));
      const consumed = bytes === chunk ? end + 4 : end + 4 - this.answerHeadPart!.length + pos;
      const partial = this.answerHeadPart !== undefined;
      this.answerHeadPart = undefined;
      const location = head.location ? answerHeadRewritten(head, exchange.head, this.context.upstream, this.context.ownUrl) : undefined;
      if (partial || location !== undefined) {
        // The head does not pass as the bytes of this chunk: what came before it goes, then the head as it is sent.
        if (pos > unsent) this.toClient(chunk.subarray(unsent, pos));
        this.toClient(location ?? bytes.subarray(start, end + 4));
        unsent = consumed;
      }
      pos = consumed;
      if (head.status < 200) {
        if (head.status === 101 && exchange.head.upgrade) {
          if (pos > unsent) this.toClient(chunk.subarray(unsent, pos));
          this.upgraded(exchange, head, chunk.subarray(pos));
          return;
        }
        // 100 Continue, 103 Early Hints: passed on, the final answer still to come.
        continue;
      }
      this.answerBegan(exchange, head);
    }
    if (pos > unsent) this.toClient(unsent === 0 ? chunk : chunk.subarray(unsent, pos));
  }

  private answerBegan(exchange: RelayedExchange, head: Head): void {
    exchange.answer = head;
    exchange.letGo();
    this.record(Told.Answered, exchange, undefined);
    this.answerBody.start(responseHasBody(exchange.head.first, head.status) ? head.body : BodyKind.None, head.length);
    if (exchange.head.upgrade) this.releaseHeld();
  }

  /** The exchange's answer ended (`finished`: whole); the next exchange's answer is read from here on. */
  private answerEnded(exchange: RelayedExchange, finished: boolean): void {
    this.exchanges.shift();
    this.lastActive = this.context.now;
    const answer = exchange.answer!;
    this.record(finished ? Told.AnswerEnded : Told.AnswerCut, exchange, undefined);
    if (!finished) return;
    this.reused = true;
    if (exchange.head.close || answer.close) this.endClient();
    else if (this.clientEnded && this.exchanges.length === 0 && this.sending === undefined) this.endClient();
  }

  /** `101 Switching Protocols`: from now on the bytes are piped both ways, nothing read. */
  private upgraded(exchange: RelayedExchange, head: Head, rest: Buffer): void {
    this.tunnel = true;
    this.exchanges.shift();
    exchange.answer = head;
    exchange.letGo();
    this.record(Told.Answered, exchange, undefined);
    this.record(Told.AnswerCut, exchange, undefined);
    if (rest.length > 0) this.toClient(rest);
    const held = this.held ?? [];
    this.held = undefined;
    for (const chunk of held) this.toUpstream(chunk);
    this.valve.release();
  }

  /** The answer to an upgrade request was not a 101: what the client sent after it is HTTP again. */
  private releaseHeld(): void {
    const held = this.held;
    if (held === undefined) return;
    this.held = undefined;
    this.valve.release();
    for (const chunk of held) this.fromClient(chunk);
  }

  private toClient(piece: Buffer | string): void {
    write(this.client, piece);
  }

  private readonly clientDrained = (): void => {
    if (!this.holdingForClient) return;
    this.holdingForClient = false;
    this.upstream?.resume();
  };

  private readonly upstreamDrained = (): void => {
    if (!this.holdingForUpstream) return;
    this.holdingForUpstream = false;
    this.valve.release();
  };

  /** The client sent all it will: the connection ends once what is in flight was answered. */
  private readonly clientEnd = (): void => {
    this.clientEnded = true;
    if (this.ending || this.tunnel || this.sending !== undefined || this.requestHeadPart !== undefined) this.client.destroy();
    else if (this.exchanges.length === 0) this.endClient();
  };

  private endClient(): void {
    this.ending = true;
    this.lastActive = this.context.now;
    this.client.end();
    const upstream = this.upstream;
    this.upstream = undefined;
    upstream?.destroy();
  }

  /**
   * The proxy answers the client itself (`status`: a deadline, a request it cannot relay) and ends the connection;
   * what was in flight ends as if the client left. Once an answer began, the connection just closes.
   */
  private refuse(status: string, body: string | undefined): void {
    if (this.ending) return;
    const began = this.exchanges.some((exchange) => exchange.answer !== undefined);
    this.abandon();
    this.ending = true;
    this.requestStarted = -1;
    this.lastActive = this.context.now;
    if (began) return void this.client.destroy();
    const text = body ?? '';
    this.client.end(
      `HTTP/1.1 ${status}\r\nConnection: close\r\n${body === undefined ? '' : `Content-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n`}\r\n${text}`,
    );
  }

  /** Every exchange in flight ends unanswered (the client left, the proxy stops or refuses): the upstream connection goes. */
  private abandon(): void {
    this.tell();
    const upstream = this.upstream;
    for (const exchange of this.exchanges.splice(0)) {
      exchange.letGo();
      const { flow, answer } = exchange;
      if (flow === undefined) continue;
      if (answer !== undefined) flow.answerEnded(false, answer.status, answer.sessionId);
      else {
        if (!exchange.requestDone) flow.bodyRead(undefined);
        flow.abandoned(exchange.requestDone && upstream !== undefined && upstream.writableLength === 0 && this.batchTarget !== upstream);
      }
    }
    this.sending = undefined;
    this.upstream = undefined;
    upstream?.destroy();
  }

  private readonly clientClosed = (): void => {
    this.closed = true;
    this.abandon();
    this.context.closed(this);
  };

  /** The upstream closed its connection: an answer delimited by the close ends; one cut short, or none, fails. */
  private upstreamClosed(upstream: Socket, failure: NodeJS.ErrnoException | undefined): void {
    if (upstream !== this.upstream || this.closed) return;
    this.upstream = undefined;
    if (this.tunnel) return void this.client.end();
    const first = this.exchanges[0];
    if (first === undefined && this.sending !== undefined) {
      // It answered a request before the request's body ended, and closed: the rest of the body has nowhere to go.
      this.sending = undefined;
      return this.endClient();
    }
    if (first === undefined) {
      // An idle connection the upstream closed (its keep-alive timeout): the next request opens another.
      if (this.holdingForUpstream) this.upstreamDrained();
      return;
    }
    if (first.answer !== undefined) {
      if (this.answerBody.closed()) {
        this.answerEnded(first, true);
        this.tell();
        this.endClient();
      } else this.client.destroy();
      return;
    }
    // A kept-alive connection the upstream closed just as the request went out (its idle timeout raced it): the
    // request never reached it, and is sent again, once, on a fresh connection when all of it was kept.
    if (this.reused && this.exchanges.length === 1 && first.requestDone && first.resend !== undefined && !this.ending) {
      this.reused = false;
      const again = this.upstreamSocket();
      // Only once: a second close before an answer is a failure.
      const pieces = first.resend;
      first.resend = undefined;
      send(again, pieces);
      first.kept.release();
      return;
    }
    this.upstreamFailed(upstream, failure?.code ?? failure?.message ?? 'closed before answering');
  }

  /** The upstream cannot answer the first exchange: a 502 when none of its answer went out, as a gateway answers. */
  private upstreamFailed(upstream: Socket, reason: string): void {
    this.tell();
    const first = this.exchanges[0];
    upstream.destroy();
    if (first === undefined || first.answer !== undefined) return void this.client.destroy();
    const { context } = this;
    const { head } = first;
    context.log(`extscope proxy: 502 for ${head.first} ${head.target}: upstream ${context.upstream.display} unreachable (${reason})`);
    // Nothing is counted: the upstream may never have seen them.
    for (const exchange of this.exchanges.splice(0)) {
      exchange.letGo();
      if (!exchange.requestDone) exchange.flow?.bodyRead(undefined);
      exchange.flow?.dropped();
    }
    this.sending = undefined;
    this.upstream = undefined;
    this.refuse('502 Bad Gateway', `extscope proxy: upstream ${context.upstream.origin} unreachable (${reason})\n`);
  }
}

const noop = (): void => {};

/**
 * Writes `pieces` (strings are latin1: one byte a character) as one write: one buffer made of them when there are
 * several, so that a request's rewritten head and its body leave in one system call, as they came in one chunk.
 */
function send(socket: Socket, pieces: readonly (Buffer | string)[]): void {
  if (pieces.length <= 1) {
    if (pieces.length === 1) write(socket, pieces[0]!);
    return;
  }
  let length = 0;
  for (const piece of pieces) length += piece.length;
  const bytes = Buffer.allocUnsafe(length);
  let at = 0;
  for (const piece of pieces) at += typeof piece === 'string' ? bytes.write(piece, at, 'latin1') : piece.copy(bytes, at);
  socket.write(bytes);
}

function write(socket: Socket, piece: Buffer | string): void {
  if (typeof piece === 'string') socket.write(piece, 'latin1');
  else socket.write(piece);
}
