import type { HttpExchange } from '../wire/http-exchange.js';
import { type DecodedReader, type DecodedSink, type Hold, decodedReader } from './decoded-reader.js';

/**
 * One {@link HttpExchange} as the proxy sees it, in the order the recorder needs: the request body is read (it may
 * still be decoding) before the server is said to have received it, and that before its answer ends. Events that
 * come earlier wait for the body. A request counts once the server received it: when the upstream began to answer,
 * or, when no answer came (a hung tool), when the client left or the proxy stopped after sending it whole: then it
 * is `cancelled`, as the in-process agent counts a request its client gave up on.
 *
 * Per request it makes this object and its exchange: an uncompressed body is handed to the exchange as it comes
 * (a compressed one through a decoder), and nothing waits on a promise, so an exchange costs no closure or
 * microtask beyond Node's own.
 */
export class ProxiedExchange {
  private bodyDone = false;
  private bodyValue: unknown;
  /** What came before the body was read (an answer that began or ended first): run once it is. */
  private waiting: (() => void)[] | undefined;
  private receivedOnce = false;
  private over = false;
  private resolveSettled: (() => void) | undefined;
  private settledPromise: Promise<void> | undefined;
  private readonly requestDecoder: DecodedReader | undefined;
  private answerDecoder: DecodedReader | undefined;

  constructor(
    private readonly exchange: HttpExchange,
    requestEncoding: string | undefined,
    source: Hold,
    private readonly fail: (error: unknown) => void,
  ) {
    this.requestDecoder = requestEncoding === undefined ? undefined : decodedReader(requestEncoding, new RequestBodySink(exchange), source);
  }

  /** Resolves once the exchange was recorded or dropped (made when asked: only a stopping proxy waits on it). */
  get settled(): Promise<void> {
    if (this.over) return Promise.resolve();
    this.settledPromise ??= new Promise<void>((resolve) => (this.resolveSettled = resolve));
    return this.settledPromise;
  }

  /** A chunk of the request's body (its payload, as it came: still encoded when it was). */
  requestChunk(chunk: Buffer): void {
    try {
      if (this.requestDecoder !== undefined) this.requestDecoder.write(chunk);
      else if (!this.exchange.requestSkipped) this.exchange.requestChunk(chunk);
    } catch (error) {
      this.fail(error);
    }
  }

  /** The body ended whole. */
  requestEnded(): void {
    if (this.requestDecoder === undefined) this.readBody();
    else this.requestDecoder.end(this.readBody);
  }

  private readonly readBody = (): void => {
    let value: unknown;
    try {
      value = this.exchange.requestBody();
    } catch (error) {
      this.fail(error);
    }
    this.bodyRead(value);
  };

  /** The request body was read whole (its parsed value, `undefined` when unreadable or too large). */
  bodyRead(value: unknown): void {
    if (this.bodyDone) return;
    this.bodyDone = true;
    this.bodyValue = value;
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting !== undefined) for (const work of waiting) work();
  }

  /** The upstream began to answer: it received the request. Its body, decoded when `contentEncoding` says so, follows. */
  answered(contentEncoding: string | undefined): void {
    // The answer's flow is the pipe's to hold (the upstream is trusted); decoding still stops once unread.
    if (contentEncoding !== undefined) this.answerDecoder = decodedReader(contentEncoding, new AnswerBodySink(this.exchange), NO_HOLD);
    if (this.bodyDone) this.receive();
    else this.later(() => this.receive());
  }

  /** A chunk of the answer's body, as it came. */
  readonly answerChunk = (chunk: Buffer): void => {
    try {
      if (this.answerDecoder !== undefined) this.answerDecoder.write(chunk);
      else if (!this.exchange.answerSkipped) this.exchange.answerChunk(chunk);
    } catch (error) {
      this.fail(error);
    }
  };

  /** The answer ended, complete (`finished`) or not. */
  answerEnded(finished: boolean, status: number, sessionId: string | undefined): void {
    if (this.answerDecoder === undefined) this.settle(finished, status, sessionId);
    else this.answerDecoder.end(() => this.settle(finished, status, sessionId));
  }

  /**
   * No answer began, and none will reach the client (it left, or the proxy stops): cancelled when the request was
   * sent to the upstream whole (the server has it), else dropped.
   */
  abandoned(sentWhole: boolean): void {
    if (!sentWhole) return this.dropped();
    if (!this.bodyDone) return this.later(() => this.abandoned(sentWhole));
    this.receive();
    this.settle(false, undefined, undefined);
  }

  /** The request never reached the server (the upstream is unreachable): nothing is counted. */
  dropped(): void {
    if (!this.end()) return;
    try {
      this.exchange.discard();
    } catch (error) {
      this.fail(error);
    }
    this.resolveSettled?.();
  }

  private settle(finished: boolean, status: number | undefined, sessionId: string | undefined): void {
    if (!this.bodyDone) return this.later(() => this.settle(finished, status, sessionId));
    if (!this.end()) return;
    try {
      this.exchange.settle(finished, status, sessionId);
    } catch (error) {
      this.fail(error);
    }
    this.resolveSettled?.();
  }

  private later(work: () => void): void {
    (this.waiting ??= []).push(work);
  }

  private receive(): void {
    if (this.receivedOnce || this.over) return;
    this.receivedOnce = true;
    try {
      this.exchange.received(this.bodyValue);
    } catch (error) {
      this.fail(error);
    }
  }

  /** `true` the first time: the exchange is over (whatever waited on the body is not done any more). */
  private end(): boolean {
    if (this.over) return false;
    this.over = true;
    this.waiting = undefined;
    return true;
  }
}

const NO_HOLD: Hold = { hold: () => {}, release: () => {} };

// The sinks of a compressed body's decoder, made only for one: classes, not object literals with a getter (such a
// literal gets a map of its own per exchange, which kept each exchange's objects alive through young collections).
class RequestBodySink implements DecodedSink {
  constructor(private readonly exchange: HttpExchange) {}

  push(chunk: Buffer): void {
    this.exchange.requestChunk(chunk);
  }

  get done(): boolean {
    return this.exchange.requestSkipped;
  }
}

class AnswerBodySink implements DecodedSink {
  constructor(private readonly exchange: HttpExchange) {}

  push(chunk: Buffer): void {
    this.exchange.answerChunk(chunk);
  }

  get done(): boolean {
    return this.exchange.answerSkipped;
  }
}
