import { AsyncLocalStorage } from 'node:async_hooks';

/** One call of an HTTP entry's `fetch`: whether a server instance received the request it carried. */
export interface HttpExchange {
  reached: boolean;
}

/**
 * Which requests an entry passed on to a server instance. The two entries of the v2 SDK answer some requests
 * themselves, before or instead of any instance: `createMcpHandler().fetch` (unsupported revision, header
 * mismatch, 413/415, missing required capabilities) and `serveStdio` (opening-message rejections, a 2025-era
 * request on a modern-only connection, `subscriptions/listen`). A request that reaches an instance is recorded
 * by that instance's connection, with the server's advertisement; the entry records only the others.
 *
 * So every connection reports each request it receives ({@link reached}), and an entry asks:
 * - HTTP: `fetch` runs as one {@link HttpExchange} ({@link runHttp}); the instance is built and connected
 *   inside that call, so its connection finds the exchange through the async context.
 * - stdio: the entry reads each request off the wire and hands that same object to the pinned instance's
 *   channel. It registers the request when it reads it ({@link forward}) and, when the answer goes out,
 *   {@link settle} tells whether an instance received it.
 */
export class EntryExchanges {
  private readonly httpExchanges = new AsyncLocalStorage<HttpExchange>();
  // Until an HTTP entry runs, no request can be inside an exchange: connections skip the context lookup.
  private httpEntrySeen = false;
  // stdio requests forwarded and not received by any instance (yet). Bounded by the entries' in-flight caps.
  private readonly forwarded = new Set<object>();

  runHttp<T>(exchange: HttpExchange, fn: () => T): T {
    this.httpEntrySeen = true;
    return this.httpExchanges.run(exchange, fn);
  }

  /** A stdio entry read `request` off its wire; an instance may receive it next. */
  forward(request: object): void {
    this.forwarded.add(request);
  }

  /**
   * A stdio entry is done with `request` (answered, cancelled, or its wire closed): `true` when no instance
   * received it, so the answer, if any, was the entry's own.
   */
  settle(request: object): boolean {
    return this.forwarded.delete(request);
  }

  /** A server instance's connection received `request`. Called for every inbound request: keep it cheap. */
  reached(request: object): void {
    if (this.forwarded.size !== 0 && this.forwarded.delete(request)) return;
    if (!this.httpEntrySeen) return;
    const exchange = this.httpExchanges.getStore();
    if (exchange !== undefined) exchange.reached = true;
  }
}
