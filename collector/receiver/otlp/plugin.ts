import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { MetricsConsumer, TracesConsumer } from '../../model/consumer.js';
import { PermanentError, RetryableError, httpStatusOf } from '../../model/errors.js';
import {
  CONTENT_TYPE,
  type OtlpFormat,
  RPC_CODE,
  type Signal,
  encodeExportResponse,
  encodeStatusBody,
} from '../../otlp/codec.js';
import type { ExportMetricsServiceRequest, ExportTraceServiceRequest } from '../../otlp/messages.js';
import type { Admission } from './admission.js';
import { type DecodedBody, type DecompressionBudget, UNSUPPORTED_MEDIA_TYPE, decodedBody, formatOf } from './body.js';
import type { DecodePool } from './decode-pool.js';
import type { ExportResult, ReceiverTelemetry } from './telemetry.js';

export interface ReceiverLimits {
  /** Largest request body as received (compressed or not). */
  maxBodyBytes: number;
  /** Largest body after gzip decompression: a gzip bomb stops here, with a 413. */
  maxDecompressedBytes: number;
}

/** Failed authentications per client address (the service's AuthFailureLimit). */
export interface AuthFailures {
  /** Records a failure; the seconds to wait when the address is over its limit. */
  failed(address: string): number | undefined;
}

/** Checks the `Authorization` header of an export. */
export interface IngestToken {
  matches(authorization: string | undefined): boolean;
}

export interface OtlpReceiverOptions {
  metrics: MetricsConsumer<ExportMetricsServiceRequest>;
  traces: TracesConsumer<ExportTraceServiceRequest>;
  admission: Admission;
  limits: ReceiverLimits;
  ingestToken: IngestToken | undefined;
  telemetry: ReceiverTelemetry;
  /** Decodes large bodies off the main thread. */
  decoder: DecodePool;
  /** Decompressed bytes held at once across all exports. */
  decompression: DecompressionBudget;
  authFailures: AuthFailures | undefined;
}

/**
 * How much of an oversized body is read and thrown away before its 413 is sent: a sender that is still writing
 * when the connection closes sees EPIPE/ECONNRESET instead of the answer. Past this (or the time bound), the
 * connection is closed anyway.
 */
const DISCARD_MAX_BYTES = 64 * 1024 * 1024;
const DISCARD_MAX_MS = 10_000;

/**
 * The longest Retry-After the receiver sends, whatever the failing stage asked for (the store says 5 s).
 * The OpenTelemetry JS exporters (otlp-exporter-base's retrying transport) wait exactly Retry-After before
 * retrying, but give up instead when that wait would end past the export's deadline; the extscope agent's
 * exports time out after 2 s (agent/register/sdk.ts), so anything above ~1.5 s means the agent never retries
 * and the export is lost. 1 s leaves room for one retry within the deadline; exporters with longer timeouts
 * (the spec's 10 s) simply retry more often, with their own backoff growing between attempts.
 */
export const MAX_RETRY_AFTER_SECONDS = 1;
const RETRY_AFTER_BUSY = 1;
const RETRY_AFTER_DRAINING = 1;

/**
 * OTLP/HTTP receiver: `POST /v1/metrics` and `POST /v1/traces`, protobuf or JSON, optionally gzipped, with the
 * specification's status codes and bodies (an Export*ServiceResponse on 200, a google.rpc.Status otherwise, in
 * the request's encoding). Registered with prefix `/v1`; its parsers and error handler stay inside it. It
 * decodes and hands each export to the next consumer; everything after that is theirs.
 */
export const otlpReceiver: FastifyPluginAsync<OtlpReceiverOptions> = async (app, options) => {
  const { metrics, traces, admission, limits, ingestToken, telemetry, decoder, decompression, authFailures } = options;
  const decodedBodies = new WeakMap<FastifyRequest, DecodedBody>();
  const started = new WeakMap<FastifyRequest, bigint>();
  const signalOf = (request: FastifyRequest): Signal => (request.url.startsWith('/v1/traces') ? 'traces' : 'metrics');
  const seconds = (request: FastifyRequest): number => {
    const start = started.get(request);
    return start === undefined ? 0 : Number(process.hrtime.bigint() - start) / 1e9;
  };

  // Only the two OTLP encodings; anything else is a 415 before the body is read.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/x-protobuf', 'application/json'], { parseAs: 'buffer', bodyLimit: limits.maxBodyBytes }, (_request, body, done) => done(null, body));

  app.addHook('onRequest', async (request, reply) => {
    started.set(request, process.hrtime.bigint());
    if (ingestToken !== undefined && !ingestToken.matches(request.headers.authorization)) {
      const wait = authFailures?.failed(request.ip);
      if (wait !== undefined) {
        void reply.header('retry-after', String(wait));
        throw Object.assign(new Error('too many failed authentication attempts from this address; retry later'), { statusCode: 429, code: 'auth_rate_limited' });
      }
      throw new PermanentError('a valid bearer token (EXTSCOPE_INGEST_TOKEN) is required', 'unauthorized', 401);
    }
    if (!admission.tryEnter()) {
      throw admission.isDraining
        ? new RetryableError('the collector is shutting down', 'draining', RETRY_AFTER_DRAINING)
        : new RetryableError('too many exports in progress; retry later', 'overloaded', RETRY_AFTER_BUSY);
    }
    reply.raw.once('close', () => {
      admission.leave();
      decodedBodies.get(request)?.release();
    });
  });

  app.setErrorHandler(async (caught: FastifyError | Error, request, reply) => {
    const error = fromFastify(caught, limits);
    const format = formatOf(request.headers['content-type']) ?? 'json';
    const { status, reason, retryAfterSeconds } = httpStatusOf(error);
    const result: ExportResult = status === 401 ? 'unauthorized' : status === 503 || status === 429 ? 'throttled' : status >= 500 ? 'failed' : 'rejected';
    telemetry.exportFinished(signalOf(request), result, seconds(request), reason);
    if (status >= 500 && status !== 503) request.log.error({ err: error }, 'export failed');
    else request.log.warn({ reason, status }, `export refused: ${error.message}`);
    if (retryAfterSeconds !== undefined) void reply.header('retry-after', String(Math.min(retryAfterSeconds, MAX_RETRY_AFTER_SECONDS)));
    if (status === 401) void reply.header('www-authenticate', 'Bearer realm="extscope ingest"');
    const code =
      status === 401
        ? RPC_CODE.unauthenticated
        : status === 503
          ? RPC_CODE.unavailable
          : status >= 500
            ? RPC_CODE.internal
            : status === 413 || status === 429
              ? RPC_CODE.resourceExhausted
              : RPC_CODE.invalidArgument;
    const message = status >= 500 && status !== 503 ? 'internal error' : error.message;
    if (!request.raw.readableEnded) {
      // Refused before its body was read (size, auth, overload): take in what the sender is still writing, up to
      // a bound, so that it reads this answer rather than a reset connection; then close the connection.
      await discardBody(request);
      void reply.header('connection', 'close');
    }
    return reply.code(status).header('content-type', CONTENT_TYPE[format]).send(encodeStatusBody(format, code, message));
  });

  const body = async (request: FastifyRequest): Promise<{ format: OtlpFormat; bytes: Buffer }> => {
    const format = formatOf(request.headers['content-type']);
    if (format === undefined || !Buffer.isBuffer(request.body)) throw new PermanentError(UNSUPPORTED_MEDIA_TYPE, 'unsupported_media_type', 415);
    const decoded = await decodedBody(request.body, request.headers['content-encoding'], limits.maxDecompressedBytes, decompression);
    decodedBodies.set(request, decoded);
    return { format, bytes: decoded.bytes };
  };

  const respond = (request: FastifyRequest, reply: FastifyReply, signal: Signal, format: OtlpFormat, rejected: number, message: string | undefined): FastifyReply => {
    telemetry.exportFinished(signal, rejected > 0 ? 'partial' : 'accepted', seconds(request));
    const partial = rejected > 0 ? { rejected, message: message ?? 'some items were refused' } : undefined;
    return reply.code(200).header('content-type', CONTENT_TYPE[format]).send(encodeExportResponse(signal, format, partial));
  };

  app.post('/metrics', { bodyLimit: limits.maxBodyBytes }, async (request, reply) => {
    const { format, bytes } = await body(request);
    const outcome = await metrics.consumeMetrics(await decoder.decodeMetrics(bytes, format));
    telemetry.metricsConsumed(outcome);
    return respond(request, reply, 'metrics', format, outcome.rejected, outcome.rejectedReason);
  });

  app.post('/traces', { bodyLimit: limits.maxBodyBytes }, async (request, reply) => {
    const { format, bytes } = await body(request);
    const outcome = await traces.consumeTraces(await decoder.decodeTraces(bytes, format));
    telemetry.tracesConsumed(outcome);
    return respond(request, reply, 'traces', format, outcome.rejected, outcome.rejectedReason);
  });
};

/** fastify's own refusals of a body, in the receiver's words. */
function fromFastify(error: FastifyError | Error, limits: ReceiverLimits): Error {
  const code = (error as FastifyError).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new PermanentError(`the body is larger than ${limits.maxBodyBytes} bytes`, 'body_too_large', 413);
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new PermanentError(UNSUPPORTED_MEDIA_TYPE, 'unsupported_media_type', 415);
  return error;
}

/** Reads and drops the rest of a request body, up to DISCARD_MAX_BYTES or DISCARD_MAX_MS, whichever comes first. */
function discardBody(request: FastifyRequest): Promise<void> {
  const raw = request.raw;
  return new Promise((resolve) => {
    let seen = 0;
    const done = (): void => {
      clearTimeout(timer);
      raw.off('data', onData);
      raw.off('end', done);
      raw.off('error', done);
      raw.off('close', done);
      resolve();
    };
    const onData = (chunk: Buffer): void => {
      seen += chunk.length;
      if (seen > DISCARD_MAX_BYTES) done();
    };
    const timer = setTimeout(done, DISCARD_MAX_MS);
    raw.on('data', onData);
    raw.once('end', done);
    raw.once('error', done);
    raw.once('close', done);
    raw.resume();
  });
}
