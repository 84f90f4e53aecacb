import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { BearerToken } from './bearer.js';
import type { AuthFailureLimit } from './failure-limit.js';
import { refuseToken } from './refusal.js';

/** The one content type admin requests carry: not one a form or a simple cross-site request can send. */
const ADMIN_CONTENT_TYPE = 'application/json';

/**
 * Why a request may have been sent by a web page of another site, or undefined when it cannot have been. A
 * browser says where a request comes from (`Sec-Fetch-Site`, `Origin`); a page of another origin can send a
 * "simple" POST (form content types) without asking first, so admin routes also require a content type that
 * needs a CORS preflight, which the collector never grants.
 */
function crossSiteReason(request: FastifyRequest): string | undefined {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return `Sec-Fetch-Site: ${site}`;
  const origin = request.headers.origin;
  if (origin !== undefined) {
    let host: string | undefined;
    try {
      host = new URL(origin).host;
    } catch {
      host = undefined;
    }
    if (host === undefined || host !== request.headers.host) return 'Origin is another site';
  }
  const mediaType = request.headers['content-type']?.split(';', 1)[0]?.trim().toLowerCase();
  if (mediaType !== ADMIN_CONTENT_TYPE) return `Content-Type is not ${ADMIN_CONTENT_TYPE}`;
  return undefined;
}

/**
 * onRequest hook for the admin routes (`/admin/*`: they copy the whole database). Requests a web page of another
 * site could have sent are refused first (403), also on a loopback collector without tokens, where any page the
 * operator has open could otherwise start a backup. With `EXTSCOPE_ADMIN_TOKEN` set, only that token passes;
 * without it they are open only where everything is (loopback, no token at all): a collector guarded by ingest
 * or read tokens keeps them shut, so that neither token grants more than it says.
 */
export function adminGuard(token: BearerToken | undefined, otherTokens: boolean, failures?: AuthFailureLimit): onRequestAsyncHookHandler {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const crossSite = crossSiteReason(request);
    if (crossSite !== undefined) {
      await reply.code(403).send({
        statusCode: 403,
        error: 'Forbidden',
        message: `admin requests must come from the same origin with Content-Type: ${ADMIN_CONTENT_TYPE} (${crossSite})`,
      });
      return;
    }
    if (token === undefined && !otherTokens) return;
    if (token === undefined) {
      await reply
        .code(403)
        .send({ statusCode: 403, error: 'Forbidden', message: 'admin routes are off: the collector has tokens but no EXTSCOPE_ADMIN_TOKEN' });
      return;
    }
    if (token.matches(request.headers.authorization)) return;
    await refuseToken(request, reply, failures, 'extscope-admin', 'EXTSCOPE_ADMIN_TOKEN');
  };
}
