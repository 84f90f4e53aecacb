import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { BearerToken } from './bearer.js';

/**
 * onRequest hook for everything behind `EXTSCOPE_READ_TOKEN` (API, /metrics; not the dashboard's static shell,
 * whose API calls carry the token): a 401 with `WWW-Authenticate` before any work. Without a token (loopback
 * only) it lets everything through.
 */
export function readGuard(token: BearerToken | undefined): onRequestAsyncHookHandler {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (token === undefined || token.matches(request.headers.authorization)) return;
    await reply
      .code(401)
      .header('www-authenticate', 'Bearer realm="extscope"')
      .send({ statusCode: 401, error: 'Unauthorized', message: 'a valid bearer token (EXTSCOPE_READ_TOKEN) is required' });
  };
}
