import { Metadata, type StatusObject, status as GrpcStatus } from '@grpc/grpc-js';
import { PermanentError, RetryableError } from '../../model/errors.js';
import { encodeStatusWithRetryInfo } from '../../otlp/proto-root.js';
import { AuthRateLimitedError, MAX_RETRY_AFTER_SECONDS } from '../otlp/gate.js';
import type { ExportResult } from '../otlp/telemetry.js';

/** What a failure becomes on OTLP/gRPC: the status the sender gets, and how the collector counts it. */
export interface GrpcFailure {
  status: Pick<StatusObject, 'code' | 'details' | 'metadata'>;
  reason: string;
  result: ExportResult;
}

/**
 * The one place a failure becomes a gRPC status, after the OTLP specification's table ("OTLP/gRPC Response"):
 * input that cannot succeed is INVALID_ARGUMENT (not retryable), a missing or wrong token UNAUTHENTICATED (not
 * retryable), input over a size limit RESOURCE_EXHAUSTED *without* RetryInfo (which OTLP clients treat as not
 * retryable); throttling (too many exports at once, the decompression budget, too many failed authentications) is
 * RESOURCE_EXHAUSTED *with* RetryInfo, and a collector that cannot take data now (shutting down, the store busy)
 * is UNAVAILABLE with RetryInfo (both retryable, after the delay). Anything else is INTERNAL, without details.
 */
export function grpcFailureOf(error: unknown): GrpcFailure {
  if (error instanceof AuthRateLimitedError) return throttled(GrpcStatus.RESOURCE_EXHAUSTED, error.message, error.code, error.retryAfterSeconds);
  if (error instanceof RetryableError) {
    const code = error.reason === 'overloaded' || error.reason === 'decompression_busy' ? GrpcStatus.RESOURCE_EXHAUSTED : GrpcStatus.UNAVAILABLE;
    return throttled(code, error.message, error.reason, error.retryAfterSeconds);
  }
  if (error instanceof PermanentError) {
    if (error.status === 401) return refused(GrpcStatus.UNAUTHENTICATED, error.message, error.reason, 'unauthorized');
    if (error.status === 413) return refused(GrpcStatus.RESOURCE_EXHAUSTED, error.message, error.reason, 'rejected');
    return refused(GrpcStatus.INVALID_ARGUMENT, error.message, error.reason, 'rejected');
  }
  return refused(GrpcStatus.INTERNAL, 'internal error', 'internal', 'failed');
}

function refused(code: GrpcStatus, details: string, reason: string, result: ExportResult): GrpcFailure {
  return { status: { code, details, metadata: new Metadata() }, reason, result };
}

function throttled(code: GrpcStatus, details: string, reason: string, retryAfterSeconds: number): GrpcFailure {
  const metadata = new Metadata();
  const delay = Math.max(1, Math.min(retryAfterSeconds, MAX_RETRY_AFTER_SECONDS));
  metadata.set('grpc-status-details-bin', Buffer.from(encodeStatusWithRetryInfo(code, details, delay)));
  return { status: { code, details, metadata }, reason, result: 'throttled' };
}
