import type { Connect, McpServerLike, ServerLike, SessionTransport } from '../internal-types.js';
import { Connection } from '../observe/connection.js';
import type { EntryExchanges } from '../observe/entry-exchange.js';
import type { HandshakeSlot, LegacyHandshake } from '../observe/request-facts.js';
import { type ServerAdvertisement, ServerAdvertisements } from '../observe/server-advertisement.js';
import type { RequestPipeline } from '../record/request-pipeline.js';
import type { Transport } from '../../contract/index.js';
import { transportKind } from '../observe/transport-kind.js';
import type { ServerIdentity } from '../types.js';
import { observeTransportRejections } from './transport-entry.js';
import { tapTransport } from './transport-tap.js';

/** How long a server seen without a name waits for a named one before the first-server hook runs anyway. */
const UNNAMED_SERVER_WAIT_MS = 1000;

/** Marks a `connect` as ours, so a second instrumentation instance (or a second copy) never doubles it. */
const PATCHED = Symbol.for('extscope.patched');

/** Marks a transport observed (a property: a `WeakSet` entry per HTTP request would cost the collector more). */
const TAPPED = Symbol('extscope.tapped');

interface Marked {
  [TAPPED]?: true;
}

export function isObservingConnect(connect: unknown): boolean {
  return typeof connect === 'function' && (connect as unknown as Record<symbol, unknown>)[PATCHED] === true;
}

/**
 * A server object's 2025-era handshake, kept by the object (a later connection of it reads it too), entered in
 * the map only once an `initialize` is answered: a fresh server per HTTP request never adds an entry.
 */
class ServerHandshake implements HandshakeSlot {
  constructor(
    private readonly handshakes: WeakMap<object, LegacyHandshake>,
    private readonly server: object,
  ) {}

  get handshake(): LegacyHandshake | undefined {
    return this.handshakes.get(this.server);
  }

  set handshake(handshake: LegacyHandshake | undefined) {
    if (handshake === undefined) this.handshakes.delete(this.server);
    else this.handshakes.set(this.server, handshake);
  }
}

/**
 * The patched `connect(transport)` of `Server` and `McpServer`: hands the server object and the transport to
 * `observe` (which never throws), then calls the original with the same arguments and returns what it returns.
 */
export function observingConnect(original: Connect, observe: (instance: unknown, transport: unknown) => void): Connect {
  const connect = function (this: unknown, ...args: unknown[]) {
    try {
      observe(this, args[0]);
    } catch {
      // observe() counts its own errors; this only guards reading the instance.
    }
    return original.apply(this, args as [unknown]);
  };
  Object.defineProperty(connect, PATCHED, { value: true });
  return connect;
}

/**
 * Observes every transport a server object is connected to: reads what the server advertises, taps the
 * transport and pairs its requests with their answers in a {@link Connection}. `McpServer.connect` delegates to
 * `Server.connect`, so both patches may hand over the same transport: it is observed once.
 */
export class ServerConnections {
  readonly advertisements: ServerAdvertisements;
  /** Transports that cannot be marked (not extensible): they are not observed, and failed once. */
  private readonly unmarkable = new WeakSet<object>();
  private readonly handshakes = new WeakMap<object, LegacyHandshake>();
  private firstServerSeen = false;
  /**
   * How the servers are reached (the first transport that tells), handed to the first-server hook for the
   * telemetry's resource: set by {@link attach}, or by whoever reads the wire (the wrapper and proxy, the wire fallback).
   */
  transport: Transport | undefined;

  constructor(
    private readonly pipeline: RequestPipeline,
    private readonly exchanges: EntryExchanges,
    private readonly onFirstServer: ((server: ServerIdentity, transport: Transport | undefined) => void) | undefined,
  ) {
    this.advertisements = new ServerAdvertisements(pipeline.reading.limits);
  }

  /** For the patched `Server.prototype.connect`. */
  readonly observeServer = (instance: unknown, transport: unknown): void => {
    this.attach(instance as ServerLike, transport);
  };

  /** For the patched `McpServer.prototype.connect`: observes the `Server` it wraps (v1 may load that class where no hook sees it). */
  readonly observeMcpServer = (instance: unknown, transport: unknown): void => {
    const server = (instance as McpServerLike).server;
    if (server !== undefined) this.attach(server, transport);
  };

  /** Starts observing `transport` on behalf of `server`. Idempotent per transport; never throws. */
  attach(server: ServerLike, transport: unknown, started = false): void {
    try {
      if (typeof transport !== 'object' || transport === null || !this.firstSight(transport)) return;
      this.transport ??= transportKind(transport);
      const advertisement = this.advertisements.read(server);
      const handshake = new ServerHandshake(this.handshakes, server);
      tapTransport(
        transport,
        new Connection(this.pipeline, this.exchanges.entryFor(server), advertisement, handshake, transport as SessionTransport),
        started ? 'now' : 'before-connect',
      );
      this.announce(advertisement);
      // The answers the transport gives itself; inside an HTTP entry's exchange (createMcpHandler's legacy
      // fallback connects a transport per request) the wrapper steps aside, as the entry sees those answers.
      try {
        observeTransportRejections(transport, advertisement, this.pipeline, this.exchanges);
      } catch (error) {
        this.pipeline.fail('attach', error);
      }
    } catch (error) {
      this.pipeline.fail('attach', error);
    }
  }

  /** `true` the first time `transport` is seen; marked first, so a failure is not retried. */
  private firstSight(transport: object): boolean {
    const marked = transport as Marked;
    if (marked[TAPPED] === true || this.unmarkable.has(transport)) return false;
    // The store tells whether the transport is extensible, cheaper than `Object.isExtensible` (see entry-exchange's
    // `mark`; not shared with it, so that each store site sees one key and stays monomorphic).
    try {
      marked[TAPPED] = true;
    } catch {
      // Not extensible, in strict code.
    }
    if (marked[TAPPED] !== true) this.unmarkable.add(transport);
    return true;
  }

  /** A server is known to serve (it connected, or the wire saw its answer): reported by the gauges from now on. */
  announce(advertisement: ServerAdvertisement): void {
    this.pipeline.advertise(advertisement);
    this.runFirstServerHook(advertisement.identity);
  }

  /**
   * A server serves, known by its name at most: the first one runs the first-server hook. A server seen
   * without a name (the wire recorded a refusal before any answer named it) waits a moment for one that has a
   * name, since the hook names the telemetry's service after it.
   */
  identify(identity: ServerIdentity): void {
    if (this.firstServerSeen) return;
    if (identity.name === undefined) {
      if (this.unnamedTimer === undefined) {
        this.unnamedTimer = setTimeout(() => this.runFirstServerHook({}), UNNAMED_SERVER_WAIT_MS);
        this.unnamedTimer.unref();
      }
      return;
    }
    this.runFirstServerHook(identity);
  }

  private unnamedTimer: ReturnType<typeof setTimeout> | undefined;

  private runFirstServerHook(identity: ServerIdentity): void {
    if (this.firstServerSeen) return;
    this.firstServerSeen = true;
    clearTimeout(this.unnamedTimer);
    this.onFirstServer?.(identity, this.transport);
  }
}

/** What `instrumentServer` accepts: an `McpServer` (its `.server`) or a `Server`, of any SDK copy. */
function serverOf(candidate: unknown): (ServerLike & { connect: Connect; transport?: unknown }) | undefined {
  if (typeof candidate !== 'object' || candidate === null) return undefined;
  const inner = (candidate as McpServerLike).server as Record<string, unknown> | undefined;
  const isServer = (value: unknown): value is ServerLike & { connect: Connect } =>
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { connect?: unknown }).connect === 'function' &&
    typeof (value as ServerLike).getCapabilities === 'function';
  if (isServer(inner)) return inner;
  return isServer(candidate) ? candidate : undefined;
}

/**
 * Observes one server object, of whatever copy of the SDK (bundled ones included): its `connect` is wrapped on
 * the instance, and a transport it is already connected to is tapped now. `false` when `candidate` has no
 * `connect()` and `getCapabilities()` (itself or as `.server`).
 */
export function instrumentServerObject(candidate: unknown, servers: ServerConnections): boolean {
  const server = serverOf(candidate);
  if (server === undefined) return false;
  if (!isObservingConnect(server.connect)) {
    (server as { connect: Connect }).connect = observingConnect(server.connect, servers.observeServer);
  }
  const transport = server.transport;
  if (typeof transport === 'object' && transport !== null) servers.attach(server, transport, true);
  return true;
}
