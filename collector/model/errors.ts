/**
 * The two kinds of failure every stage reports, after the OpenTelemetry Collector's `consumererror`: a
 * {@link PermanentError} says that the same input will fail the same way (refused, never retried), anything
 * else is retryable. {@link httpStatusOf} is the one place a failure becomes an HTTP status.
 */

/**
 * Statuses a permanent failure may carry: the input is wrong (400), unauthorised, too large, of a wrong type; or
 * it asks for what this collector does not do (501, {@link UnsupportedError}).
 */
export type PermanentStatus = 400 | 401 | 413 | 415 | 501;

/** Retrying the same input cannot succeed: it is refused as a whole, and nothing of it is stored. */
export class PermanentError extends Error {
  override readonly name: string = 'PermanentError';

  constructor(
    message: string,
    /** A short label for the collector's own metrics (`reason` label). */
    readonly reason: string,
    readonly status: PermanentStatus = 400,
  ) {
    super(message);
  }
}

/** What was asked for is not something this collector does (an online backup of a PostgreSQL store): 501. */
export class UnsupportedError extends PermanentError {
  override readonly name: string = 'UnsupportedError';

  constructor(message: string, reason: string) {
    super(message, reason, 501);
  }
}

/** Nothing is wrong with the input, the collector cannot take it now (overloaded, shutting down, store busy). */
export class RetryableError extends Error {
  override readonly name: string = 'RetryableError';

  constructor(
    message: string,
    readonly reason: string,
    /** How long the sender should wait (the Retry-After header). */
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/** Retryable because too much is under way at once (exports, decompression, reads): the sender should slow down. */
export class BusyError extends RetryableError {
  override readonly name: string = 'BusyError';
}

/** Busy with this sender in particular: it sent too much of something (failed authentications from its address). 429. */
export class RateLimitedError extends BusyError {
  override readonly name: string = 'RateLimitedError';
}

/**
 * The collector was told something it cannot run with (an option, an environment variable, a rules file, a
 * delivery URL): it refuses to start, and the CLI prints the message without a stack.
 */
export class ConfigError extends Error {
  override readonly name: string = 'ConfigError';
}

export interface HttpFailure {
  status: number;
  reason: string;
  /** Seconds, for a retryable failure. */
  retryAfterSeconds?: number;
}

/**
 * Permanent → its status (400 unless said otherwise); rate-limited → 429 with Retry-After; any other retryable →
 * 503 with Retry-After; an error that already carries a 4xx status (fastify's own: validation, body limits) keeps
 * it; anything else is an internal error.
 */
export function httpStatusOf(error: unknown): HttpFailure {
  if (error instanceof PermanentError) return { status: error.status, reason: error.reason };
  if (error instanceof RateLimitedError) return { status: 429, reason: error.reason, retryAfterSeconds: error.retryAfterSeconds };
  if (error instanceof RetryableError) return { status: 503, reason: error.reason, retryAfterSeconds: error.retryAfterSeconds };
  const { statusCode, code } = (error ?? {}) as { statusCode?: unknown; code?: unknown };
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500)
    return { status: statusCode, reason: typeof code === 'string' ? code : 'bad_request' };
  return { status: 500, reason: 'internal' };
}
