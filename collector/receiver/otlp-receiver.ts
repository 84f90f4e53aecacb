import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { CollectorLimits } from '../config.js';
import {
  CONTENT_TYPE,
  OtlpDecodeError,
  type OtlpFormat,
  RPC_CODE,
  type Signal,
  decodeMetricsRequest,
  decodeTraceRequest,
  encodeExportResponse,
  encodeStatusBody,
} from '../otlp/codec.js';
import type { Consumer } from '../processing/pipeline.js';
import { ExportRejection } from '../processing/rejection.js';
import type { BearerToken } from '../security/bearer.js';
import { StoreUnavailableError } from '../store/store.js';
import type { Admission } from './admission.js';
import { IngestError } from './ingest-error.js';
import type { ExportResult, ReceiverTelemetry } from './receiver-telemetry.js';
import { decodedBody, formatOf } from './request-body.js';

export interface OtlpReceiverOptions {
  consumer: Consumer;
  admission: Admission;
  limits: CollectorLimits;
  ingestToken: BearerToken | undefined;
  telemetry: ReceiverTelemetry;
}

/** Seconds an overloaded or draining collector asks exporters to wait. */
const RETRY_AFTER_BUSY = 1;
const RETRY_AFTER_DRAINING = 5;
const RETRY_AFTER_STORE = 5;

/**
 * OTLP/HTTP receiver: `POST /v1/metrics` and `POST /v1/traces`, protobuf or JSON, optionally gzipped, with the
 * specification's status codes and bodies (an Export*ServiceResponse on 200, a google.rpc.Status otherwise, in
 * the request's encoding). Registered with prefix `/v1`; its parsers and error handler stay inside it.
 */
export const otlpReceiver: FastifyPluginAsync<OtlpReceiverOptions> = async (app, options) => {
  const { consumer, admission, limits, ingestToken, telemetry } = options;
  const started = new WeakMap<FastifyRequest, bigint>();
  const signalOf = (request: FastifyRequest): Signal => (request.url.startsWith('/v1/traces') ? 'traces' : 'metrics');
  const seconds = (request: FastifyRequest): number => {
    const start = started.get(request);
    return start === undefined ? 0 : Number(process.hrtime.bigint() - start) / 1e9;
  };

  // Only the two OTLP encodings; anything else is a 415 before the body is read.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    ['application/x-protobuf', 'application/json'],
    { parseAs: 'buffer', bodyLimit: limits.maxBodyBytes },
    (_request, body, done) => done(null, body),
  );

  app.addHook('onRequest', async (request, reply) => {
    started.set(request, process.hrtime.bigint());
    if (ingestToken !== undefined && !ingestToken.matches(request.headers.authorization)) {
      throw new IngestError(401, 'a valid bearer token (EXTSCOPE_INGEST_TOKEN) is required', 'unauthorized');
    }
    if (!admission.tryEnter()) {
      throw admission.isDraining
        ? new IngestError(503, 'the collector is shutting down', 'draining', RETRY_AFTER_DRAINING)
        : new IngestError(503, 'too many exports in progress; retry later', 'overloaded', RETRY_AFTER_BUSY);
    }
    reply.raw.once('close', () => admission.leave());
  });

  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    const format = formatOf(request.headers['content-type']) ?? 'json';
    const { status, reason, retryAfter, message: override } = classify(error, limits);
    const result: ExportResult = status === 401 ? 'unauthorized' : status === 503 || status === 429 ? 'throttled' : status >= 500 ? 'failed' : 'rejected';
    telemetry.exportFinished(signalOf(request), result, seconds(request), reason);
    if (status >= 500 && status !== 503) request.log.error({ err: error }, 'export failed');
    else request.log.warn({ reason, status }, `export refused: ${error.message}`);
    if (retryAfter !== undefined) void reply.header('retry-after', String(retryAfter));
    if (status === 401) void reply.header('www-authenticate', 'Bearer realm="extscope ingest"');
    const code = status === 401 ? RPC_CODE.unauthenticated : status === 503 ? RPC_CODE.unavailable : status >= 500 ? RPC_CODE.internal : status === 413 ? RPC_CODE.resourceExhausted : RPC_CODE.invalidArgument;
    const message = override ?? (status >= 500 && status !== 503 ? 'internal error' : error.message);
    return reply.code(status).header('content-type', CONTENT_TYPE[format]).send(encodeStatusBody(format, code, message));
  });

  const body = async (request: FastifyRequest): Promise<{ format: OtlpFormat; bytes: Buffer }> => {
    const format = formatOf(request.headers['content-type']);
    if (format === undefined || !Buffer.isBuffer(request.body)) {
      throw new IngestError(415, 'Content-Type must be application/x-protobuf or application/json', 'unsupported_media_type');
    }
    return { format, bytes: await decodedBody(request.body, request.headers['content-encoding'], limits.maxDecompressedBytes) };
  };

  const respond = (request: FastifyRequest, reply: FastifyReply, signal: Signal, format: OtlpFormat, rejected: number, message: string | undefined): FastifyReply => {
    telemetry.exportFinished(signal, rejected > 0 ? 'partial' : 'accepted', seconds(request));
    const partial = rejected > 0 ? { rejected, message: message ?? 'some items were refused' } : undefined;
    return reply.code(200).header('content-type', CONTENT_TYPE[format]).send(encodeExportResponse(signal, format, partial));
  };

  app.post('/metrics', { bodyLimit: limits.maxBodyBytes }, async (request, reply) => {
    const { format, bytes } = await body(request);
    const outcome = await consumer.consumeMetrics(decodeMetricsRequest(bytes, format));
    telemetry.metricsConsumed(outcome);
    return respond(request, reply, 'metrics', format, outcome.rejected, outcome.rejectedReason);
  });

  app.post('/traces', { bodyLimit: limits.maxBodyBytes }, async (request, reply) => {
    const { format, bytes } = await body(request);
    const outcome = await consumer.consumeTraces(decodeTraceRequest(bytes, format));
    telemetry.tracesConsumed(outcome);
    return respond(request, reply, 'traces', format, outcome.rejected, outcome.rejectedReason);
  });
};

interface Classified {
  status: number;
  reason: string;
  retryAfter?: number;
  /** Replaces the error's own message in the response. */
  message?: string;
}

function classify(error: FastifyError | Error, limits: CollectorLimits): Classified {
  if (error instanceof IngestError) {
    return { status: error.statusCode, reason: error.reason, ...(error.retryAfterSeconds !== undefined && { retryAfter: error.retryAfterSeconds }) };
  }
  if (error instanceof ExportRejection) return { status: 400, reason: error.reason };
  if (error instanceof OtlpDecodeError) return { status: 400, reason: 'malformed' };
  if (error instanceof StoreUnavailableError) return { status: 503, reason: 'store_unavailable', retryAfter: RETRY_AFTER_STORE };
  const code = (error as FastifyError).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return { status: 413, reason: 'body_too_large', message: `the body is larger than ${limits.maxBodyBytes} bytes` };
  }
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
    return { status: 415, reason: 'unsupported_media_type', message: 'Content-Type must be application/x-protobuf or application/json' };
  }
  const status = (error as FastifyError).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return { status, reason: code ?? 'bad_request' };
  return { status: 500, reason: 'internal' };
}
