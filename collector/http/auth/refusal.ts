import type { FastifyReply, FastifyRequest } from 'fastify';
import { AUTH_RATE_LIMITED, type AuthFailureLimit } from './failure-limit.js';

/**
 * Answers a request whose bearer token did not match: a 429 with Retry-After once the address has failed too
 * often (see {@link AuthFailureLimit}), else a 401 naming the realm and the variable that holds the token.
 */
export async function refuseToken(request: FastifyRequest, reply: FastifyReply, failures: AuthFailureLimit | undefined, realm: string, variable: string): Promise<void> {
  const wait = failures?.failed(request.ip);
  if (wait !== undefined) {
    await reply.code(429).header('retry-after', String(wait)).send({ statusCode: 429, error: 'Too Many Requests', message: AUTH_RATE_LIMITED });
    return;
  }
  await reply
    .code(401)
    .header('www-authenticate', `Bearer realm="${realm}"`)
    .send({ statusCode: 401, error: 'Unauthorized', message: `a valid bearer token (${variable}) is required` });
}
