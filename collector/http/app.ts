import { STATUS_CODES } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyPluginAsync, LogController } from 'fastify';
import { PermanentError, httpStatusOf } from '../model/errors.js';
import type { BearerToken } from './auth/bearer.js';
import type { AuthFailureLimit } from './auth/failure-limit.js';
import { readGuard } from './auth/read-guard.js';
import { type HostPolicy, hostGuard } from './host-allow-list.js';

export interface AppOptions {
  /** fastify/pino logger options; `false` logs nothing. */
  logger: boolean | Record<string, unknown>;
  /** How long a request may take to arrive in full (headers and body); then it is answered 408 and its connection closed. */
  receiveTimeoutMs?: number;
  /** The `Host` values answered (host-allow-list.ts); the rest are refused 421 before any route. */
  hosts: HostPolicy;
}

/** How often the server looks for requests past their receive deadline (Node's default is 30 s). */
const DEADLINE_CHECK_MS = 1000;

interface AjvError {
  instancePath: string;
  message?: string;
  params?: { additionalProperty?: string; allowedValues?: unknown[] };
}

/** Validation errors that name the parameter, the unknown property, or the allowed values. */
function schemaErrorFormatter(errors: readonly AjvError[], dataVar: string): Error {
  const text = errors
    .map((error) => {
      const path = `${dataVar}${error.instancePath.replaceAll('/', '.')}`;
      const extra =
        error.params?.additionalProperty !== undefined
          ? `: ${error.params.additionalProperty}`
          : error.params?.allowedValues !== undefined
            ? ` (${error.params.allowedValues.join(', ')})`
            : '';
      return `${path} ${error.message ?? 'is invalid'}${extra}`;
    })
    .join('; ');
  return new Error(text);
}

/**
 * The fastify instance every route lives on: query strings validated and coerced by their schemas, errors
 * named precisely, and one error handler mapping failures to statuses (model/errors.ts); encapsulated
 * plugins (the OTLP receiver) answer in their own encoding.
 */
export function createApp(options: AppOptions): FastifyInstance {
  const app = Fastify({
    logger: options.logger,
    // One line per export would drown everything else; refusals and errors are logged where they happen.
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: 'idle',
    // A sender that opens a request and never finishes it (headers or body) holds its socket until this deadline.
    ...(options.receiveTimeoutMs === undefined
      ? {}
      : {
          requestTimeout: options.receiveTimeoutMs,
          // node:http checks headersTimeout ≤ requestTimeout when it creates the server, before fastify sets
          // requestTimeout: both go in here too, or a deadline above node's default (300 s) stops the start.
          http: {
            connectionsCheckingInterval: Math.min(DEADLINE_CHECK_MS, options.receiveTimeoutMs),
            headersTimeout: options.receiveTimeoutMs,
            requestTimeout: options.receiveTimeoutMs,
          },
        }),
    ajv: { customOptions: { removeAdditional: false, coerceTypes: true } },
    schemaErrorFormatter,
  });
  // Before any route, token or body: DNS rebinding gets no further.
  app.addHook('onRequest', hostGuard(options.hosts));
  // Every answer (JSON, OTLP bodies, the dashboard, errors): a browser must not guess a type other than the one sent.
  app.addHook('onSend', async (_request, reply, payload) => {
    void reply.header('x-content-type-options', 'nosniff');
    return payload;
  });
  app.setErrorHandler((error, request, reply) => {
    const { status, reason, retryAfterSeconds } = httpStatusOf(error);
    if (status >= 500 && !(error instanceof PermanentError)) request.log.error({ err: error }, 'request failed');
    if (retryAfterSeconds !== undefined) void reply.header('retry-after', String(retryAfterSeconds));
    const code = (error as { code?: unknown }).code;
    return reply.code(status).send({
      statusCode: status,
      code: typeof code === 'string' ? code : `EXTSCOPE_${reason.toUpperCase()}`,
      error: STATUS_CODES[status],
      message: error instanceof Error ? error.message : String(error),
    });
  });
  return app;
}

/** Routes behind the read token (or open, on loopback without one): the API and /metrics. */
export function readScope(token: BearerToken | undefined, routes: FastifyPluginAsync, failures?: AuthFailureLimit): FastifyPluginAsync {
  return async (scope) => {
    scope.addHook('onRequest', readGuard(token, failures));
    await scope.register(routes);
  };
}
