import { AsyncLocalStorage } from 'node:async_hooks';
import type { RequestId } from './request-facts.js';

/**
 * What a server instance's connection tells the entry its requests come through: each one it receives, with
 * what the transport passed along with it (`extra`).
 */
export interface EntryReach {
  reached(id: RequestId, extra: unknown): void;
}

/** One call of an HTTP entry's `fetch`: whether a server instance received the request it carried. */
export interface HttpExchange {
  reached: boolean;
  /** Told of each clone of the request made during the exchange. */
  copies: { cloned(copy: object): void } | undefined;
}

/** Marks a request (and its clones) with the exchange it belongs to: a property, not a `WeakMap` entry per request. */
const EXCHANGE = Symbol('extscope.httpExchange');

interface InExchange {
  [EXCHANGE]?: HttpExchange;
}

/**
 * Marks `target` as part of `exchange`; `false` when it cannot be (not extensible). The store tells, for the price
 * of a store, where `Object.isExtensible` is a runtime call: it throws in strict code, and the read back covers a
 * copy of this module bundled into sloppy code, where it fails silently.
 */
function mark(target: InExchange, exchange: HttpExchange): boolean {
  try {
    target[EXCHANGE] = exchange;
    return target[EXCHANGE] === exchange;
  } catch {
    return false;
  }
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
 * - HTTP, `createMcpHandler().fetch(request)`: one {@link HttpExchange} ({@link enterHttp}), known by its Fetch API
 *   `Request`, which it marks: the SDK hands that object on, to the transport it connects the instance to and from there with
 *   every message (`extra.request`), so the instance's connection finds the exchange by it. The 2025-era
 *   fallback hands on a clone instead (`request.clone()`, the original's body being read): while the exchange
 *   runs, the request's `clone` is wrapped so that its clones belong to the exchange too.
 * - HTTP, a session transport's own `handleRequest`: v1's passes no request with its messages, only a copy of
 *   its headers, so those exchanges are found through the async context ({@link runHttpInContext}).
 *
 * Why not the async context for both: on Node 20, once an `AsyncLocalStorage` is entered, every promise of the
 * process pays for async hooks (a fifth of the CPU per request of an HTTP server doing little else), so it is
 * used only where nothing else tells.
 */
export class EntryExchanges {
  // Until an HTTP entry runs, no request can be inside an exchange: connections skip the lookup.
  private httpEntrySeen = false;
  /** Made on first use: until then, no promise pays for it. */
  private contextExchanges: AsyncLocalStorage<HttpExchange> | undefined;
  private readonly stdioEntries = new WeakMap<object, EntryReach>();
  // Until a stdio entry builds a server, every server reports to the HTTP reach: no lookup per connection.
  private stdioEntrySeen = false;

  /** For the connections of every server object no stdio entry built: marks the HTTP exchange, if any. */
  private readonly http: EntryReach = {
    reached: (_id, extra) => {
      if (!this.httpEntrySeen) return;
      const request = typeof extra === 'object' && extra !== null ? (extra as { request?: unknown }).request : undefined;
      const exchange = (typeof request === 'object' && request !== null ? (request as InExchange)[EXCHANGE] : undefined) ?? this.contextExchanges?.getStore();
      if (exchange !== undefined) exchange.reached = true;
    },
  };

  /** Whether an HTTP entry's exchange (`createMcpHandler().fetch`) is serving this `Request` (or a clone of it). */
  inHttpExchange(request: object): boolean {
    return this.httpEntrySeen && (request as InExchange)[EXCHANGE] !== undefined;
  }

  /**
   * Makes `request` and the clones made of it until {@link leaveHttp} part of `exchange`. A request that cannot
   * be marked or whose `clone` cannot be wrapped (frozen, `clone` its own property, already in an exchange)
   * counts as reached: its entry's answers go unrecorded rather than be recorded twice.
   */
  enterHttp(exchange: HttpExchange, request: object): void {
    this.httpEntrySeen = true;
    const clone = (request as { clone?: unknown }).clone;
    const marked = request as InExchange;
    if (typeof clone !== 'function' || Object.hasOwn(request, 'clone') || marked[EXCHANGE] !== undefined || !mark(marked, exchange)) {
      exchange.reached = true;
      return;
    }
    const cloneInExchange = function (this: unknown) {
      const copy: unknown = clone.apply(this, arguments as unknown as unknown[]);
      if (typeof copy === 'object' && copy !== null) {
        mark(copy as InExchange, exchange);
        exchange.copies?.cloned(copy);
      }
      return copy;
    };
    try {
      // Defined, not assigned: a prototype may hold `clone` read-only (@hono/node-server's requests do), where
      // an assignment throws. Not enumerable, as the prototype's is not.
      Object.defineProperty(request, 'clone', { value: cloneInExchange, writable: true, configurable: true, enumerable: false });
    } catch {
      exchange.reached = true;
    }
  }

  /** Ends what {@link enterHttp} began; the request's clones are its own again. */
  leaveHttp(exchange: HttpExchange, request: object): void {
    const marked = request as InExchange;
    if (marked[EXCHANGE] !== exchange) return;
    // The last property added goes first: each delete then just undoes an addition.
    delete (request as { clone?: unknown }).clone;
    delete marked[EXCHANGE];
  }

  /** Runs `fetch` as an exchange found through the async context. */
  runHttpInContext<T>(exchange: HttpExchange, fetch: () => Promise<T>): Promise<T> {
    this.httpEntrySeen = true;
    this.contextExchanges ??= new AsyncLocalStorage();
    return this.contextExchanges.run(exchange, fetch);
  }

  /** A stdio entry's factory built `server`: its connections report to `entry`. */
  builtBy(server: object, entry: EntryReach): void {
    this.stdioEntrySeen = true;
    this.stdioEntries.set(server, entry);
  }

  /** Where the connections of `server` report the requests they receive. */
  entryFor(server: object): EntryReach {
    return (this.stdioEntrySeen ? this.stdioEntries.get(server) : undefined) ?? this.http;
  }
}
