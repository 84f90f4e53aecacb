import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { MetricsConsumer, TracesConsumer } from '../../model/consumer.js';
import { PermanentError, RetryableError, httpStatusOf } from '../../model/errors.js';
import {
  CONTENT_TYPE,
  type OtlpFormat,
  RPC_CODE,
  type Signal,
  decodeMetricsRequest,
  decodeTraceRequest,
  encodeExportResponse,
  encodeStatusBody,
} from '../../otlp/codec.js';
import type { ExportMetricsServiceRequest, ExportTraceServiceRequest } from '../../otlp/messages.js';
import type { Admission } from './admission.js';
import { UNSUPPORTED_MEDIA_TYPE, decodedBody, formatOf } from './body.js';
import type { ExportResult, ReceiverTelemetry } from './telemetry.js';

export interface ReceiverLimits {
  /** Largest request body as received (compressed or not). */
  maxBodyBytes: number;
  /** Largest body after gzip decompression: a gzip bomb stops here, with a 413. */
  maxDecompressedBytes: number;
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
}

/** Seconds an overloaded or draining collector asks exporters to wait. */
const RETRY_AFTER_BUSY = 1;
const RETRY_AFTER_DRAINING = 5;

/**
 * OTLP/HTTP receiver: `POST /v1/metrics` and `POST /v1/traces`, protobuf or JSON, optionally gzipped, with the
 * specification's status codes and bodies (an Export*ServiceResponse on 200, a google.rpc.Status otherwise, in
 * the request's encoding). Registered with prefix `/v1`; its parsers and error handler stay inside it. It
 * decodes and hands each export to the next consumer; everything after that is theirs.
 */
export const otlpReceiver: FastifyPluginAsync<OtlpReceiverOptions> = async (app, options) => {
  const { metrics, traces, admission, limits, ingestToken, telemetry } = options;
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
      throw new PermanentError('a valid bearer token (EXTSCOPE_INGEST_TOKEN) is required', 'unauthorized', 401);
    }
    if (!admission.tryEnter()) {
      throw admission.isDraining
        ? new RetryableError('the collector is shutting down', 'draining', RETRY_AFTER_DRAINING)
        : new RetryableError('too many exports in progress; retry later', 'overloaded', RETRY_AFTER_BUSY);
    }
    reply.raw.once('close', () => admission.leave());
  });

  app.setErrorHandler((caught: FastifyError | Error, request, reply) => {
    const error = fromFastify(caught, limits);
    const format = formatOf(request.headers['content-type']) ?? 'json';
    const { status, reason, retryAfterSeconds } = httpStatusOf(error);
    const result: ExportResult = status === 401 ? 'unauthorized' : status === 503 || status === 429 ? 'throttled' : status >= 500 ? 'failed' : 'rejected';
    telemetry.exportFinished(signalOf(request), result, seconds(request), reason);
    if (status >= 500 && status !== 503) request.log.error({ err: error }, 'export failed');
    else request.log.warn({ reason, status }, `export refused: ${error.message}`);
    if (retryAfterSeconds !== undefined) void reply.header('retry-after', String(retryAfterSeconds));
    if (status === 401) void reply.header('www-authenticate', 'Bearer realm="extscope ingest"');
    const code =
      status === 401 ? RPC_CODE.unauthenticated : status === 503 ? RPC_CODE.unavailable : status >= 500 ? RPC_CODE.internal : status === 413 ? RPC_CODE.resourceExhausted : RPC_CODE.invalidArgument;
    const message = status >= 500 && status !== 503 ? 'internal error' : error.message;
    return reply.code(status).header('content-type', CONTENT_TYPE[format]).send(encodeStatusBody(format, code, message));
  });

  const body = async (request: FastifyRequest): Promise<{ format: OtlpFormat; bytes: Buffer }> => {
    const format = formatOf(request.headers['content-type']);
    if (format === undefined || !Buffer.isBuffer(request.body)) throw new PermanentError(UNSUPPORTED_MEDIA_TYPE, 'unsupported_media_type', 415);
    return { format, bytes: await decodedBody(request.body, request.headers['content-encoding'], limits.maxDecompressedBytes) };
  };

  const respond = (request: FastifyRequest, reply: FastifyReply, signal: Signal, format: OtlpFormat, rejected: number, message: string | undefined): FastifyReply => {
    telemetry.exportFinished(signal, rejected > 0 ? 'partial' : 'accepted', seconds(request));
    const partial = rejected > 0 ? { rejected, message: message ?? 'some items were refused' } : undefined;
    return reply.code(200).header('content-type', CONTENT_TYPE[format]).send(encodeExportResponse(signal, format, partial));
  };

  app.post('/metrics', { bodyLimit: limits.maxBodyBytes }, async (request, reply) => {
    const { format, bytes } = await body(request);
    const outcome = await metrics.consumeMetrics(decodeMetricsRequest(bytes, format));
    telemetry.metricsConsumed(outcome);
    return respond(request, reply, 'metrics', format, outcome.rejected, outcome.rejectedReason);
  });

  app.post('/traces', { bodyLimit: limits.maxBodyBytes }, async (request, reply) => {
    const { format, bytes } = await body(request);
    const outcome = await traces.consumeTraces(decodeTraceRequest(bytes, format));
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
