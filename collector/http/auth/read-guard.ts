import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { BearerToken } from './bearer.js';
import { AUTH_RATE_LIMITED, type AuthFailureLimit } from './failure-limit.js';

/**
 * onRequest hook for everything behind `EXTSCOPE_READ_TOKEN` (API, /metrics; not the dashboard's static shell,
 * whose API calls carry the token): a 401 with `WWW-Authenticate` before any work, or a 429 with Retry-After once
 * the address has failed too often (see {@link AuthFailureLimit}). Without a token (loopback only) it lets
 * everything through.
 */
export function readGuard(token: BearerToken | undefined, failures?: AuthFailureLimit): onRequestAsyncHookHandler {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (token === undefined || token.matches(request.headers.authorization)) return;
    const wait = failures?.failed(request.ip);
    if (wait !== undefined) {
      await reply.code(429).header('retry-after', String(wait)).send({ statusCode: 429, error: 'Too Many Requests', message: AUTH_RATE_LIMITED });
      return;
    }
    await reply
      .code(401)
      .header('www-authenticate', 'Bearer realm="extscope"')
      .send({ statusCode: 401, error: 'Unauthorized', message: 'a valid bearer token (EXTSCOPE_READ_TOKEN) is required' });
  };
}
