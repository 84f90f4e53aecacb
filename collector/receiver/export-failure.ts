import { MAX_RETRY_AFTER_SECONDS } from './otlp/gate.js';
import type { ExportResult } from './otlp/telemetry.js';
import { BusyError, httpStatusOf } from '../model/errors.js';

/** google.rpc.Status codes, which are gRPC's status codes: the gRPC answer's code, and the code in an OTLP/HTTP error body. */
const RPC_CODE = {
  invalidArgument: 3,
  resourceExhausted: 8,
  unimplemented: 12,
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
 * How a failed export is answered, after the OTLP specification's tables ("OTLP/HTTP Response", "OTLP/gRPC
 * Response"), over the collector's one error → HTTP status table (model/errors.ts {@link httpStatusOf}): input
 * that cannot succeed is 400 / INVALID_ARGUMENT and a missing or wrong token 401 / UNAUTHENTICATED (never
 * retried); input over a size limit is 413 / RESOURCE_EXHAUSTED *without* RetryInfo (which OTLP clients treat as
 * not retryable); too much at once (exports, decompression) is 503, and too many failed authentications from one
 * address 429, RESOURCE_EXHAUSTED *with* a wait; a collector that cannot take data now (shutting down, the store
 * busy) 503 / UNAVAILABLE with a wait. Anything else is 500 / INTERNAL, its message kept to the log.
 */
export function exportFailureOf(error: unknown): ExportFailure {
  const { status, reason, retryAfterSeconds } = httpStatusOf(error);
  if (status === 500) return { httpStatus: 500, rpcCode: RPC_CODE.internal, message: 'internal error', reason, result: 'failed' };
  const { message } = (error ?? {}) as { message?: unknown };
  const failure = { httpStatus: status, rpcCode: rpcCodeOf(status, error), message: typeof message === 'string' ? message : 'bad request', reason };
  if (retryAfterSeconds !== undefined) return { ...failure, retryAfterSeconds: retry(retryAfterSeconds), result: 'throttled' };
  return { ...failure, result: status === 401 ? 'unauthorized' : 'rejected' };
}

function rpcCodeOf(status: number, error: unknown): RpcCode {
  if (status === 401) return RPC_CODE.unauthenticated;
  if (status === 413 || status === 429) return RPC_CODE.resourceExhausted;
  if (status === 503) return error instanceof BusyError ? RPC_CODE.resourceExhausted : RPC_CODE.unavailable;
  if (status === 501) return RPC_CODE.unimplemented;
  return RPC_CODE.invalidArgument;
}
