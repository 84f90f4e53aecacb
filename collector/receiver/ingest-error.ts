/** An ingest request answered with an HTTP error (and an OTLP `Status` body). */
export class IngestError extends Error {
  override readonly name = 'IngestError';

  constructor(
    readonly statusCode: number,
    message: string,
    /** A short label for the collector's own metrics. */
    readonly reason: string,
    /** Seconds, for 429/503: OTLP clients wait this long before retrying. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}
