import { Metadata, type StatusObject } from '@grpc/grpc-js';
import { encodeStatusWithRetryInfo } from '../../otlp/proto-root.js';
import { type ExportFailure, exportFailureOf } from '../export-failure.js';

/** A failed export as OTLP/gRPC answers it: the status (with RetryInfo when the sender should retry), and the failure. */
export interface GrpcFailure extends ExportFailure {
  status: Pick<StatusObject, 'code' | 'details' | 'metadata'>;
}

/** {@link exportFailureOf} as a gRPC status: its code and message, and its wait as RetryInfo in the status details. */
export function grpcFailureOf(error: unknown): GrpcFailure {
  const failure = exportFailureOf(error);
  const metadata = new Metadata();
  if (failure.retryAfterSeconds !== undefined)
    metadata.set('grpc-status-details-bin', Buffer.from(encodeStatusWithRetryInfo(failure.rpcCode, failure.message, failure.retryAfterSeconds)));
  return { ...failure, status: { code: failure.rpcCode, details: failure.message, metadata } };
}
