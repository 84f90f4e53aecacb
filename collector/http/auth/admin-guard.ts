import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { BearerToken } from './bearer.js';
import type { AuthFailureLimit } from './failure-limit.js';
import { refuseToken } from './refusal.js';

/**
 * onRequest hook for the admin routes (`/admin/*`: they copy the whole database). With `EXTSCOPE_ADMIN_TOKEN`
 * set, only that token passes; without it they are open only where everything is (loopback, no token at all):
 * a collector guarded by ingest or read tokens keeps them shut, so that neither token grants more than it says.
 */
export function adminGuard(token: BearerToken | undefined, otherTokens: boolean, failures?: AuthFailureLimit): onRequestAsyncHookHandler {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (token === undefined && !otherTokens) return;
    if (token === undefined) {
      await reply.code(403).send({ statusCode: 403, error: 'Forbidden', message: 'admin routes are off: the collector has tokens but no EXTSCOPE_ADMIN_TOKEN' });
      return;
    }
    if (token.matches(request.headers.authorization)) return;
    await refuseToken(request, reply, failures, 'extscope-admin', 'EXTSCOPE_ADMIN_TOKEN');
  };
}
