import { AuthRateLimitedError, MAX_RETRY_AFTER_SECONDS } from './otlp/gate.js';
import type { ExportResult } from './otlp/telemetry.js';
import { BusyError, PermanentError, RetryableError } from '../model/errors.js';

/** google.rpc.Status codes, which are gRPC's status codes: the gRPC answer's code, and the code in an OTLP/HTTP error body. */
const RPC_CODE = {
  invalidArgument: 3,
  resourceExhausted: 8,
  internal: 13,
  unavailable: 14,
  unauthenticated: 16,
} as const;
type RpcCode = (typeof RPC_CODE)[keyof typeof RPC_CODE];

/** How a failed export is answered, whichever protocol carries it, and how the collector counts it. */
export interface ExportFailure {
  /** OTLP/HTTP. */
  httpStatus: number;
  /** OTLP/gRPC, and the code of an OTLP/HTTP error body. */
  rpcCode: RpcCode;
  /** Present when the sender should retry: the wait (Retry-After, gRPC RetryInfo), within 1 s … MAX_RETRY_AFTER_SECONDS. */
  retryAfterSeconds?: number;
  /** What the sender is told: an internal error's own message is not. */
  message: string;
  /** A short label for the collector's own metrics. */
  reason: string;
  result: ExportResult;
}

const retry = (seconds: number): number => Math.max(1, Math.min(seconds, MAX_RETRY_AFTER_SECONDS));

/**
 * The one place a failed export becomes an answer, after the OTLP specification's tables ("OTLP/HTTP Response",
 * "OTLP/gRPC Response"): input that cannot succeed is 400 / INVALID_ARGUMENT and a missing or wrong token 401 /
 * UNAUTHENTICATED (never retried); input over a size limit is 413 / RESOURCE_EXHAUSTED *without* RetryInfo (which
 * OTLP clients treat as not retryable); too much at once (exports, decompression, failed authentications) is 503
 * or 429 / RESOURCE_EXHAUSTED *with* a wait, and a collector that cannot take data now (shutting down, the store
 * busy) 503 / UNAVAILABLE with a wait. Anything else is 500 / INTERNAL, its message kept to the log.
 */
export function exportFailureOf(error: unknown): ExportFailure {
  if (error instanceof AuthRateLimitedError) {
    return { httpStatus: 429, rpcCode: RPC_CODE.resourceExhausted, retryAfterSeconds: retry(error.retryAfterSeconds), message: error.message, reason: error.code, result: 'throttled' };
  }
  if (error instanceof RetryableError) {
    const rpcCode = error instanceof BusyError ? RPC_CODE.resourceExhausted : RPC_CODE.unavailable;
    return { httpStatus: 503, rpcCode, retryAfterSeconds: retry(error.retryAfterSeconds), message: error.message, reason: error.reason, result: 'throttled' };
  }
  if (error instanceof PermanentError) {
    if (error.status === 401) return { httpStatus: 401, rpcCode: RPC_CODE.unauthenticated, message: error.message, reason: error.reason, result: 'unauthorized' };
    return { httpStatus: error.status, rpcCode: error.status === 413 ? RPC_CODE.resourceExhausted : RPC_CODE.invalidArgument, message: error.message, reason: error.reason, result: 'rejected' };
  }
  // fastify's own refusals (validation, limits) carry their 4xx status.
  const { statusCode, code, message } = (error ?? {}) as { statusCode?: unknown; code?: unknown; message?: unknown };
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    return {
      httpStatus: statusCode,
      rpcCode: statusCode === 413 || statusCode === 429 ? RPC_CODE.resourceExhausted : RPC_CODE.invalidArgument,
      message: typeof message === 'string' ? message : 'bad request',
      reason: typeof code === 'string' ? code : 'bad_request',
      result: 'rejected',
    };
  }
  return { httpStatus: 500, rpcCode: RPC_CODE.internal, message: 'internal error', reason: 'internal', result: 'failed' };
}
