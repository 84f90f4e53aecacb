/**
 * What leaves the process when it ends: flushing on the ways out that let asynchronous code run. Shared by the
 * zero-code entry (which adds a synchronous last export for `process.exit()`) and by ExtscopeInstrumentation
 * under an application's own SDK (which flushes that SDK's providers, never shuts them down: they are the app's).
 */
import { type MeterProvider, type TracerProvider, metrics, trace } from '@opentelemetry/api';

/** How long a flush at exit may hold up the process. */
export const EXIT_FLUSH_DEADLINE_MS = 1500;

/** The signals whose default action ends the process, and on which the agent flushes first. */
const FLUSH_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** Settles when `work` does or `deadlineMs` passed, whichever is first; never rejects. */
function bounded(work: Promise<unknown>, deadlineMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, deadlineMs);
    timer.unref();
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    work.then(done, done);
  });
}

type Flushable = { forceFlush?: () => Promise<void> };

/**
 * Flushes providers without shutting them down: an export of everything their readers hold now, extscope's counts
 * included. The global ones unless others are given. Bounded by `deadlineMs`; never rejects.
 */
export function flushProviders(
  providers: { meterProvider?: MeterProvider; tracerProvider?: TracerProvider } = {},
  deadlineMs = EXIT_FLUSH_DEADLINE_MS,
): Promise<void> {
  const meterProvider = (providers.meterProvider ?? metrics.getMeterProvider()) as Flushable;
  const tracerProvider = (providers.tracerProvider ?? trace.getTracerProvider()) as Flushable & { getDelegate?: () => unknown };
  const tracerDelegate = (tracerProvider.getDelegate?.() ?? tracerProvider) as Flushable;
  const flush = async (provider: Flushable): Promise<void> => {
    if (typeof provider.forceFlush === 'function') await provider.forceFlush();
  };
  return bounded(Promise.allSettled([flush(meterProvider), flush(tracerDelegate)]), deadlineMs);
}

/** `flush`, but a call while one runs joins it (a signal during the `beforeExit` flush, say). */
export function onceAtATime(flush: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => {
    running ??= flush().finally(() => {
      running = undefined;
    });
    return running;
  };
}

/**
 * Sends what was counted on every way out that lets code run:
 * - the event loop drained (`beforeExit`): `flush` (asynchronous, bounded), as an SDK's own shutdown would;
 * - a signal whose default is to end the process: when nobody else listens, `flush`, then `last`, then the signal
 *   is raised again so the process still dies of it; when the app listens, it decides, and we flush alongside;
 * - `process.exit()`, an uncaught exception or unhandled rejection, and every other end: in the `'exit'` event,
 *   where only synchronous code runs, `last` (when given).
 */
export function flushOnExit(flush: () => Promise<void>, last: () => void = () => {}): void {
  process.once('beforeExit', () => void flush());
  process.once('exit', last);
  for (const signal of FLUSH_SIGNALS) {
    const onSignal = (): void => {
      const alone = process.listenerCount(signal) === 1;
      void flush().then(() => {
        process.removeListener(signal, onSignal);
        if (!alone) return;
        last();
        process.kill(process.pid, signal);
      });
    };
    process.on(signal, onSignal);
  }
}

/** Flushes registered by instrumentations under an application's own SDK; the process hooks are set once. */
const exitFlushes = new Set<() => Promise<void>>();
let exitHooked = false;

/**
 * Adds `flush` to what runs on the asynchronous ways out (see flushOnExit; no `last`), hooking the process the first
 * time. Returns the function that removes it again (an instrumentation disabled).
 */
export function flushAtExit(flush: () => Promise<void>): () => void {
  if (!exitHooked) {
    exitHooked = true;
    flushOnExit(onceAtATime(async () => void (await Promise.allSettled([...exitFlushes].map((each) => each())))));
  }
  exitFlushes.add(flush);
  return () => exitFlushes.delete(flush);
}
