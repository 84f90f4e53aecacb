import { type Context, context } from '@opentelemetry/api';

/**
 * Observes a transport's traffic without changing it: every inbound message through the `onmessage` callback
 * the SDK installs, every outbound one through `send`, and the close through `onclose`.
 *
 * `Protocol.connect` installs its dispatcher by assigning `transport.onmessage`, so the callback is wrapped on
 * assignment. Some transports (Node's streamable HTTP one) forward `onmessage` through prototype accessors to
 * an inner transport; shadowing them with a plain property would silently stop delivery, so an inherited
 * accessor is delegated to, never replaced.
 */
export interface TransportObserver {
  /**
   * Sees an inbound message before it is dispatched; may return the context to dispatch it in (the request's
   * span). Must not throw: observation errors are its own to catch.
   */
  inbound(message: unknown, extra: unknown): Context | undefined;
  outbound(message: unknown): void;
  closed(): void;
}

type Callback = (this: unknown, ...args: unknown[]) => unknown;

function findDescriptor(target: object, property: string): { descriptor: PropertyDescriptor; own: boolean } | undefined {
  for (let object: object | null = target; object !== null; object = Object.getPrototypeOf(object)) {
    const descriptor = Object.getOwnPropertyDescriptor(object, property);
    if (descriptor !== undefined) return { descriptor, own: object === target };
  }
  return undefined;
}

/** Makes every function assigned to `target[property]` pass through `wrap`. */
function interceptAssignment(target: object, property: string, wrap: (callback: Callback) => Callback): void {
  const found = findDescriptor(target, property);
  const accessor = found !== undefined && (found.descriptor.get !== undefined || found.descriptor.set !== undefined)
    ? found.descriptor
    : undefined;
  const wrapIfFunction = (value: unknown): unknown => (typeof value === 'function' ? wrap(value as Callback) : value);
  if (accessor !== undefined) {
    Object.defineProperty(target, property, {
      configurable: true,
      enumerable: accessor.enumerable ?? false,
      get(this: unknown) {
        return accessor.get?.call(this);
      },
      set(this: unknown, value: unknown) {
        accessor.set?.call(this, wrapIfFunction(value));
      },
    });
    return;
  }
  let stored = found?.own ? found.descriptor.value : undefined;
  Object.defineProperty(target, property, {
    configurable: true,
    enumerable: found?.descriptor.enumerable ?? true,
    get: () => stored,
    set: (value: unknown) => {
      stored = wrapIfFunction(value);
    },
  });
}

function assertConfigurable(target: object, property: string): void {
  if (Object.getOwnPropertyDescriptor(target, property)?.configurable === false) {
    throw new Error(`transport.${property} is not configurable`);
  }
}

/** Throws, having changed nothing, when the transport cannot be observed. */
export function tapTransport(transport: object, observer: TransportObserver): void {
  const send = (transport as { send?: unknown }).send;
  if (typeof send !== 'function') throw new Error('transport has no send()');
  if (!Object.isExtensible(transport)) throw new Error('transport is not extensible');
  for (const property of ['onmessage', 'onclose', 'send']) assertConfigurable(transport, property);
  // A callback installed before connect gets chained inside the SDK's dispatcher, and would be wrapped too:
  // the message currently being dispatched is observed once, by the outermost wrapper.
  let dispatching: unknown;
  let depth = 0;
  interceptAssignment(transport, 'onmessage', (callback) =>
    function observedOnMessage(this: unknown, message: unknown, extra: unknown) {
      // `arguments`, not (message, extra): whatever the transport passes reaches the callback unchanged.
      const args = arguments;
      if (depth > 0 && dispatching === message) return callback.apply(this, args as unknown as unknown[]);
      const previous = dispatching;
      dispatching = message;
      depth++;
      try {
        const scope = observer.inbound(message, extra);
        return scope === undefined
          ? callback.apply(this, args as unknown as unknown[])
          : context.with(scope, callback, this, ...(args as unknown as unknown[]));
      } finally {
        depth--;
        dispatching = previous;
      }
    },
  );
  interceptAssignment(transport, 'onclose', (callback) =>
    function observedOnClose(this: unknown, ...args: unknown[]) {
      observer.closed();
      return callback.apply(this, args);
    },
  );
  Object.defineProperty(transport, 'send', {
    configurable: true,
    writable: true,
    enumerable: false,
    value: function observedSend(this: unknown, message: unknown) {
      observer.outbound(message);
      return (send as Callback).apply(this, arguments as unknown as unknown[]);
    },
  });
}
