import type { HttpExchange } from '../wire/http-exchange.js';

/**
 * One {@link HttpExchange} as the proxy sees it, in the order the recorder needs: the request body is read (it may
 * still be decoding) before the server is said to have received it, and that before its answer ends. Events that
 * come earlier wait for the body. A request counts once the server received it: when the upstream began to answer,
 * or, when no answer came (a hung tool), when the client left or the proxy stopped after sending it whole: then it
 * is `cancelled`, as the in-process agent counts a request its client gave up on.
 */
export class ProxiedExchange {
  private body: { value: unknown } | undefined;
  private readonly waiting: (() => void)[] = [];
  private receivedOnce = false;
  private over = false;
  private resolveSettled!: () => void;
  /** Resolves once the exchange was recorded or dropped. */
  readonly settled = new Promise<void>((resolve) => (this.resolveSettled = resolve));

  constructor(
    private readonly exchange: HttpExchange,
    private readonly guard: (work: () => void) => void,
  ) {}

  /** The request body was read whole (its parsed value, `undefined` when unreadable or too large). */
  bodyRead(value: unknown): void {
    if (this.body !== undefined) return;
    this.body = { value };
    for (const work of this.waiting.splice(0)) work();
  }

  /** The upstream began to answer: it received the request. */
  answered(): void {
    this.whenRead(() => this.receive());
  }

  /** The answer ended, complete (`finished`) or not. */
  answerEnded(finished: boolean, status: number, sessionId: string | undefined): void {
    this.whenRead(() => this.finish(() => this.exchange.settle(finished, status, sessionId)));
  }

  /**
   * No answer began, and none will reach the client (it left, or the proxy stops): cancelled when the request was
   * sent to the upstream whole (the server has it), else dropped.
   */
  abandoned(sentWhole: boolean): void {
    if (!sentWhole) return this.dropped();
    this.whenRead(() => {
      this.receive();
      this.finish(() => this.exchange.settle(false, undefined, undefined));
    });
  }

  /** The request never reached the server (the upstream is unreachable): nothing is counted. */
  dropped(): void {
    this.finish(() => this.exchange.discard());
  }

  private whenRead(work: () => void): void {
    if (this.body !== undefined) this.guard(work);
    else this.waiting.push(() => this.guard(work));
  }

  private receive(): void {
    if (this.receivedOnce || this.over) return;
    this.receivedOnce = true;
    this.exchange.received(this.body!.value);
  }

  private finish(work: () => void): void {
    if (this.over) return;
    this.over = true;
    this.waiting.length = 0;
    this.guard(work);
    this.resolveSettled();
  }
}
