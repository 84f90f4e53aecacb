import { AsyncLocalStorage } from 'node:async_hooks';
import type { RequestId } from './request-facts.js';

/** What a server instance's connection tells the entry its requests come through: each one it receives. */
export interface EntryReach {
  reached(id: RequestId): void;
}

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
 * So every connection reports each request it receives to the {@link EntryReach} of its server object:
 * - stdio: `serveStdio` builds its instances with the app's factory (a probe, then the one it pins). The
 *   patched entry registers each server the factory returns ({@link builtBy}); the connections of those
 *   servers report to that entry, which keeps the requests it read off its wire until they are answered.
 * - HTTP: `fetch` runs as one {@link HttpExchange} ({@link runHttp}); the instance is built and connected inside
 *   that call, so its connection finds the exchange through the async context.
 */
export class EntryExchanges {
  private readonly httpExchanges = new AsyncLocalStorage<HttpExchange>();
  // Until an HTTP entry runs, no request can be inside an exchange: connections skip the context lookup.
  private httpEntrySeen = false;
  private readonly stdioEntries = new WeakMap<object, EntryReach>();

  /** For the connections of every server object no stdio entry built: marks the HTTP exchange, if any. */
  private readonly http: EntryReach = {
    reached: () => {
      if (!this.httpEntrySeen) return;
      const exchange = this.httpExchanges.getStore();
      if (exchange !== undefined) exchange.reached = true;
    },
  };

  /** Whether the caller runs inside an HTTP entry's exchange (`createMcpHandler().fetch`). */
  inHttpExchange(): boolean {
    return this.httpEntrySeen && this.httpExchanges.getStore() !== undefined;
  }

  runHttp<T>(exchange: HttpExchange, fn: () => T): T {
    this.httpEntrySeen = true;
    return this.httpExchanges.run(exchange, fn);
  }

  /** A stdio entry's factory built `server`: its connections report to `entry`. */
  builtBy(server: object, entry: EntryReach): void {
    this.stdioEntries.set(server, entry);
  }

  /** Where the connections of `server` report the requests they receive. */
  entryFor(server: object): EntryReach {
    return this.stdioEntries.get(server) ?? this.http;
  }
}
