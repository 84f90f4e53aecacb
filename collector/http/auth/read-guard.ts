import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { BearerToken } from './bearer.js';
import type { AuthFailureLimit } from './failure-limit.js';
import { refuseToken } from './refusal.js';

/**
 * onRequest hook for everything behind `EXTSCOPE_READ_TOKEN` (API, /metrics; not the dashboard's static shell,
 * whose API calls carry the token): a 401 with `WWW-Authenticate` before any work, or a 429 with Retry-After once
 * the address has failed too often (see {@link AuthFailureLimit}). Without a token (loopback only) it lets
 * everything through.
 */
export function readGuard(token: BearerToken | undefined, failures?: AuthFailureLimit): onRequestAsyncHookHandler {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (token === undefined || token.matches(request.headers.authorization)) return;
    await refuseToken(request, reply, failures, 'extscope', 'EXTSCOPE_READ_TOKEN');
  };
}
