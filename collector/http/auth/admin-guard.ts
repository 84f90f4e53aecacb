import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { BearerToken } from './bearer.js';
import { AUTH_RATE_LIMITED, type AuthFailureLimit } from './failure-limit.js';

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
    const wait = failures?.failed(request.ip);
    if (wait !== undefined) {
      await reply.code(429).header('retry-after', String(wait)).send({ statusCode: 429, error: 'Too Many Requests', message: AUTH_RATE_LIMITED });
      return;
    }
    await reply
      .code(401)
      .header('www-authenticate', 'Bearer realm="extscope-admin"')
      .send({ statusCode: 401, error: 'Unauthorized', message: 'a valid bearer token (EXTSCOPE_ADMIN_TOKEN) is required' });
  };
}
