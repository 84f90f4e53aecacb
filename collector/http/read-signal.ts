import type { FastifyReply, FastifyRequest } from 'fastify';
import { PermanentError } from '../model/errors.js';

/** Why a read stopped: whoever asked went away before its answer (the page navigated, the fetch was aborted). */
class ReadAbandonedError extends PermanentError {
  override readonly name = 'ReadAbandonedError';

  constructor() {
    super('the connection closed before the answer was sent', 'read_abandoned');
  }
}

const signals = new WeakMap<FastifyRequest, AbortSignal>();

/**
 * `onRequest` for the read API: a signal per request, aborted when its response closes unfinished (the browser
 * gave up on it), so that the store stops a long read at its next chunk rather than compute what nobody receives.
 */
export async function watchAbandonment(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const controller = new AbortController();
  signals.set(request, controller.signal);
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new ReadAbandonedError());
  });
}

/** The request's signal (one that never aborts outside the read API). */
export function readSignal(request: FastifyRequest): AbortSignal | undefined {
  return signals.get(request);
}
