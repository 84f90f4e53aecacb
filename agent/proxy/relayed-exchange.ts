import type { KeptBytes } from '../wire/byte-budget.js';
import type { Head } from './http-head.js';
import type { ProxiedExchange } from './proxied-exchange.js';

/** Request bytes up to this size are kept until the upstream answers, to send them again once (a kept-alive upstream connection closed as it went out). */
const RESEND_LIMIT = 1024 * 1024;
/** What the recorder is told of an exchange, in the order it happened (see `RelayedConnection.records`). */
export const enum Told {
  /** The request's head went on: its recording is made. */
  Began,
  RequestChunk,
  RequestEnded,
  Answered,
  AnswerChunk,
  AnswerEnded,
  AnswerCut,
}

/** One request and its answer, in flight on a connection. */
export class RelayedExchange {
  requestDone = false;
  answer: Head | undefined = undefined;
  /** The request's bytes as sent upstream, kept to send again until an answer begins (`undefined`: not kept). */
  resend: (Buffer | string)[] | undefined = [];
  resendBytes = 0;

  /** The recording of an exchange that is `recorded`, made once its head went on. */
  flow: ProxiedExchange | undefined = undefined;

  constructor(
    readonly head: Head,
    /** An MCP POST: what it sends and what it gets are recorded. */
    readonly recorded: boolean,
    readonly kept: KeptBytes,
  ) {}

  keep(piece: Buffer | string): void {
    if (this.resend === undefined) return;
    this.resendBytes += piece.length;
    if (this.resendBytes <= RESEND_LIMIT && this.kept.resize(this.resendBytes)) this.resend.push(piece);
    else this.letGo();
  }

  letGo(): void {
    if (this.resend === undefined) return;
    this.resend = undefined;
    this.kept.release();
  }
}
