import { type Context, context } from '@opentelemetry/api';
import type { TappableTransport } from '../internal-types.js';

/**
 * Observes a transport's traffic without changing it: every inbound message through the `onmessage` callback
 * the SDK installs, every outbound one through `send`, and the close through `onclose` ({@link CloseHook}).
 *
 * `Protocol.connect` (v1 and v2) assigns `onmessage`/`onclose` and then calls `transport.start()`, which is
 * when messages may start to flow (an in-memory transport delivers what was queued right inside `start`). So
 * the callbacks are wrapped when `start` is called, by reading and re-assigning them: a transport that forwards
 * `onmessage` through prototype accessors to an inner transport (Node's streamable HTTP one) keeps doing so.
 * Only plain assignments are used, never `defineProperty` over an existing property: that would turn the
 * transport into a dictionary-mode object and slow down every property access the SDK makes on it.
 */
export interface TransportObserver {
  /**
   * Sees an inbound message before it is dispatched; may return the context to dispatch it in (the request's
   * span). Must not throw: observation errors are its own to catch.
   */
  inbound(message: unknown, extra: unknown): Context | undefined;
  outbound(message: unknown): void;
  closed(): void;
  /** The callbacks could not be wrapped at start; the transport runs unobserved. */
  failed(error: unknown): void;
}

type Callback = (this: unknown, ...args: unknown[]) => unknown;

function assertAssignable(target: object, property: string): void {
  const own = Object.getOwnPropertyDescriptor(target, property);
  if (own !== undefined && own.writable === false && own.set === undefined) throw new Error(`transport.${property} is read-only`);
}

/*
 * The wrappers pass on exactly the arguments they were given. The common arities go through `call` with named
 * arguments: forwarding `arguments` costs an arguments object per message and keeps V8 from inlining the callee.
 *
 * There are two sets of the per-message wrappers, written out twice on purpose: one for the transports server
 * objects are connected to, one for the wire a `serveStdio` entry reads (which carries the same requests again,
 * before its instance's channel does). Every closure made from one function literal shares that literal's
 * call-site feedback, and a call site that has seen two different callees (the entry's observer and a
 * connection's, the SDK's wire callback and its channel's) is megamorphic: V8 then inlines neither. With one
 * set for both, that cost about a third of the agent's path per request (test/bench/agent-path.mjs).
 */

/** The per-message wrappers of one kind of tap. */
export interface MessageWrappers {
  onmessage(dispatch: Callback, observer: TransportObserver): Callback;
  send(send: Callback, observer: TransportObserver): Callback;
}

/** For the transports of server objects: their observer may give the context to dispatch a request in. */
const CONNECTION_WRAPPERS: MessageWrappers = {
  onmessage: (dispatch, observer) =>
    function observedOnMessage(this: unknown, message: unknown, extra: unknown) {
      const scope = observer.inbound(message, extra);
      if (scope !== undefined) return context.with(scope, dispatch, this, ...(arguments as unknown as unknown[]));
      if (arguments.length === 2) return dispatch.call(this, message, extra);
      return arguments.length === 1 ? dispatch.call(this, message) : dispatch.apply(this, arguments as unknown as unknown[]);
    },
  send: (send, observer) =>
    function observedSend(this: unknown, message: unknown, options: unknown) {
      observer.outbound(message);
      if (arguments.length === 2) return send.call(this, message, options);
      return arguments.length === 1 ? send.call(this, message) : send.apply(this, arguments as unknown as unknown[]);
    },
};

/** For the wire of a `serveStdio` entry: its observer never gives a context (its instance's connection does). */
export const ENTRY_WIRE_WRAPPERS: MessageWrappers = {
  onmessage: (dispatch, observer) =>
    function observedWireMessage(this: unknown, message: unknown, extra: unknown) {
      observer.inbound(message, extra);
      if (arguments.length === 1) return dispatch.call(this, message);
      return arguments.length === 2 ? dispatch.call(this, message, extra) : dispatch.apply(this, arguments as unknown as unknown[]);
    },
  send: (send, observer) =>
    function observedWireSend(this: unknown, message: unknown, options: unknown) {
      observer.outbound(message);
      if (arguments.length === 1) return send.call(this, message);
      return arguments.length === 2 ? send.call(this, message, options) : send.apply(this, arguments as unknown as unknown[]);
    },
};

function observeCallbacks(transport: TappableTransport, observer: TransportObserver, wrappers: MessageWrappers, close: CloseHook): void {
  const onmessage = transport.onmessage;
  if (typeof onmessage === 'function') transport.onmessage = wrappers.onmessage(onmessage as Callback, observer);
  if (close !== 'before-connect') hookClose(transport, observer);
}

/** Has `onclose` tell the observer first, then call what it called before, if anything. */
function hookClose(transport: TappableTransport, observer: TransportObserver): void {
  const onclose = transport.onclose;
  transport.onclose =
    typeof onclose === 'function'
      ? function observedOnClose(this: unknown) {
          observer.closed();
          return (onclose as Callback).apply(this, arguments as unknown as unknown[]);
        }
      : function observedOnClose() {
          observer.closed();
        };
}

/**
 * How a tap hooks `onclose`:
 * - `before-connect`: now, as a server object's `connect` begins. `Protocol.connect` (v1 and v2) keeps the
 *   `onclose` it finds and calls it from its own, before its `_onclose`, so the observer hears of the close first
 *   and is off the stack when `_onclose` builds its "Connection closed" error: wrapped around the SDK's callback
 *   instead, it was one more frame in that error's stack trace, which an HTTP server captures on every request.
 * - `at-start`: wrapped with the other callbacks when the transport starts (a stdio entry's wire, whose
 *   `onclose` is assigned, not chained).
 * - `now`: the transport was started already (a server attached by hand after `connect`): every callback is
 *   wrapped now.
 */
export type CloseHook = 'before-connect' | 'at-start' | 'now';

/** Throws, having changed nothing, when the transport cannot be observed. */
export function tapTransport(transport: object, observer: TransportObserver, close: CloseHook, wrappers = CONNECTION_WRAPPERS): void {
  const target = transport as TappableTransport;
  const { send, start } = target;
  if (typeof send !== 'function' || typeof start !== 'function') throw new Error('transport has no send() or start()');
  if (!Object.isExtensible(transport)) throw new Error('transport is not extensible');
  for (const property of ['send', 'start', 'onmessage', 'onclose']) assertAssignable(transport, property);
  if (close === 'before-connect') hookClose(target, observer);
  if (close === 'now') observeCallbacks(target, observer, wrappers, close);
  else
    target.start = function observedStart(this: unknown) {
      try {
        observeCallbacks(target, observer, wrappers, close);
      } catch (error) {
        observer.failed(error);
      }
      return start.apply(this, arguments as unknown as unknown[]);
    };
  target.send = wrappers.send(send, observer);
}
