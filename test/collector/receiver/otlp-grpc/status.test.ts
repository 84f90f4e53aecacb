import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { BusyError, PermanentError, RateLimitedError, RetryableError } from '../../../../collector/model/errors.js';
import { exportFailureOf } from '../../../../collector/receiver/export-failure.js';
import { grpcFailureOf } from '../../../../collector/receiver/otlp-grpc/status.js';
import { retryDelaySeconds } from './helpers.js';

/** The failures no OpenTelemetry exporter can provoke on demand (shutdown, a busy store, a bug), mapped as the OTLP specification asks. */
describe('failures → OTLP/gRPC status', () => {
  it('shutting down and a busy store are UNAVAILABLE with RetryInfo, capped at 1 s', () => {
    const draining = grpcFailureOf(new RetryableError('the collector is shutting down', 'draining', 1));
    expect(draining.status.code).toBe(status.UNAVAILABLE);
    expect(retryDelaySeconds(draining.status.metadata ?? undefined)).toBe(1);
    const busy = grpcFailureOf(new RetryableError('the database is busy', 'store_busy', 5));
    expect(busy).toMatchObject({ status: { code: status.UNAVAILABLE }, reason: 'store_busy', result: 'throttled' });
    expect(retryDelaySeconds(busy.status.metadata ?? undefined)).toBe(1);
  });

  it('throttling is RESOURCE_EXHAUSTED with RetryInfo; too large is RESOURCE_EXHAUSTED without', () => {
    for (const error of [
      new BusyError('busy', 'overloaded', 1),
      new BusyError('busy', 'decompression_busy', 1),
      new RateLimitedError('too many failed authentications', 'auth_rate_limited', 40),
    ]) {
      const failure = grpcFailureOf(error);
      expect(failure.status.code).toBe(status.RESOURCE_EXHAUSTED);
      expect(retryDelaySeconds(failure.status.metadata ?? undefined)).toBe(1);
    }
    const large = grpcFailureOf(new PermanentError('too large', 'decode_too_large', 413));
    expect(large).toMatchObject({ status: { code: status.RESOURCE_EXHAUSTED }, result: 'rejected' });
    expect(retryDelaySeconds(large.status.metadata ?? undefined)).toBeUndefined();
  });

  it('bad input is INVALID_ARGUMENT, a missing token UNAUTHENTICATED, anything else INTERNAL without its message', () => {
    expect(grpcFailureOf(new PermanentError('bad', 'malformed')).status.code).toBe(status.INVALID_ARGUMENT);
    expect(grpcFailureOf(new PermanentError('token', 'unauthorized', 401))).toMatchObject({ status: { code: status.UNAUTHENTICATED }, result: 'unauthorized' });
    expect(grpcFailureOf(new Error('secret detail'))).toMatchObject({ status: { code: status.INTERNAL, details: 'internal error' }, result: 'failed' });
  });

  it('each failure is answered alike on OTLP/HTTP and OTLP/gRPC: the same retry wait, message and count, the status of each protocol', () => {
    const cases: [unknown, number, number, number | undefined][] = [
      [new BusyError('busy', 'overloaded', 5), 503, status.RESOURCE_EXHAUSTED, 1],
      [new RetryableError('the collector is shutting down', 'draining', 1), 503, status.UNAVAILABLE, 1],
      [new RateLimitedError('too many failed authentications', 'auth_rate_limited', 40), 429, status.RESOURCE_EXHAUSTED, 1],
      [new PermanentError('token', 'unauthorized', 401), 401, status.UNAUTHENTICATED, undefined],
      [new PermanentError('too large', 'body_too_large', 413), 413, status.RESOURCE_EXHAUSTED, undefined],
      [new PermanentError('wrong type', 'unsupported_media_type', 415), 415, status.INVALID_ARGUMENT, undefined],
      [new PermanentError('bad', 'malformed'), 400, status.INVALID_ARGUMENT, undefined],
      [new Error('secret detail'), 500, status.INTERNAL, undefined],
    ];
    for (const [error, httpStatus, code, wait] of cases) {
      const failure = exportFailureOf(error);
      const grpc = grpcFailureOf(error);
      expect([failure.httpStatus, failure.rpcCode, failure.retryAfterSeconds], String(error)).toEqual([httpStatus, code, wait]);
      expect([grpc.status.code, grpc.status.details, retryDelaySeconds(grpc.status.metadata ?? undefined), grpc.result]).toEqual([
        code,
        failure.message,
        wait,
        failure.result,
      ]);
    }
    expect(exportFailureOf(new Error('secret detail')).message).toBe('internal error');
  });
});
