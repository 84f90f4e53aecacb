import type { FastifyReply, FastifyRequest } from 'fastify';
import { RateLimitedError } from '../../model/errors.js';
import { AUTH_RATE_LIMITED, type AuthFailureLimit } from './failure-limit.js';

/**
 * Answers a request whose bearer token did not match: a 401 naming the realm and the variable that holds the
 * token, or, once the address has failed too often (see {@link AuthFailureLimit}), a {@link RateLimitedError},
 * which the app's error table answers 429 with Retry-After.
 */
export async function refuseToken(
  request: FastifyRequest,
  reply: FastifyReply,
  failures: AuthFailureLimit | undefined,
  realm: string,
  variable: string,
): Promise<void> {
  const wait = failures?.failed(request.ip);
  if (wait !== undefined) throw new RateLimitedError(AUTH_RATE_LIMITED, 'auth_rate_limited', wait);
  await reply
    .code(401)
    .header('www-authenticate', `Bearer realm="${realm}"`)
    .send({ statusCode: 401, error: 'Unauthorized', message: `a valid bearer token (${variable}) is required` });
}
