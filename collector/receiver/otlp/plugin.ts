import { Transform } from 'node:stream';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { MetricsConsumer, TracesConsumer } from '../../model/consumer.js';
import { BusyError } from '../../model/errors.js';
import { PermanentError } from '../../model/errors.js';
import { CONTENT_TYPE, type OtlpFormat, type PartialSuccess, type Signal, encodeExportResponse, encodeStatusBody } from '../../otlp/codec.js';
import type { ExportMetricsServiceRequest, ExportTraceServiceRequest } from '../../otlp/messages.js';
import type { Admission, Ticket } from './admission.js';
import { type DecodedBody, type DecompressionBudget, UNSUPPORTED_MEDIA_TYPE, decodedBody, formatOf } from './body.js';
import type { DecodePool } from './decode-pool.js';
import { exportFailureOf } from '../export-failure.js';
import { type AuthFailures, type IngestToken, admit, authenticate, begin } from './gate.js';
import { consumeExport } from './pipeline.js';
import type { ArrivingBody, EvictionReason, ReceiveBudget } from './receive-budget.js';
import { ExportObservation, type ReceiverTelemetry } from './telemetry.js';

interface ReceiverLimits {
  /** Largest request body as received (compressed or not). */
  maxBodyBytes: number;
  /** Largest body after gzip decompression: a gzip bomb stops here, with a 413. */
  maxDecompressedBytes: number;
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
  /** Bytes of bodies still arriving, across connections and per peer address. */
  receiving: ReceiveBudget;
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
 * OTLP/HTTP receiver: `POST /v1/metrics` and `POST /v1/traces`, protobuf or JSON, optionally gzipped, with the
 * specification's status codes and bodies (an Export*ServiceResponse on 200, a google.rpc.Status otherwise, in
 * the request's encoding). Registered with prefix `/v1`; its parsers and error handler stay inside it. It
 * decodes and hands each export to the next consumer; everything after that is theirs.
 */
export const otlpReceiver: FastifyPluginAsync<OtlpReceiverOptions> = async (app, options) => {
  const { admission, limits, ingestToken, telemetry, decompression, receiving, authFailures } = options;
  const decodedBodies = new WeakMap<FastifyRequest, DecodedBody>();
  /** Each export from its arrival to its answer: ended with the answer, by the route or by the error handler. */
  const observations = new WeakMap<FastifyRequest, ExportObservation>();
  const signalOf = (request: FastifyRequest): Signal => (request.url.startsWith('/v1/traces') ? 'traces' : 'metrics');
  const observationOf = (request: FastifyRequest): ExportObservation =>
    observations.get(request) ?? new ExportObservation(telemetry, 'http', signalOf(request));

  // Only the two OTLP encodings; anything else is a 415 before the body is read.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(['application/x-protobuf', 'application/json'], { parseAs: 'buffer', bodyLimit: limits.maxBodyBytes }, (_request, body, done) =>
    done(null, body),
  );

  /** Each export's place in the admission, and the bytes of its body while it arrives. */
  const tickets = new WeakMap<FastifyRequest, Ticket>();
  const arriving = new WeakMap<FastifyRequest, ArrivingBody>();

  // An export is refused here, before its body is read, when every slot is taken (or the collector is draining);
  // otherwise it is begun without a slot. Whatever it holds is given back when its connection's answer is done or
  // the connection closes, whichever path led there.
  app.addHook('onRequest', async (request, reply) => {
    observations.set(request, new ExportObservation(telemetry, 'http', signalOf(request)));
    authenticate({ ingestToken, authFailures, admission }, request.headers.authorization, request.ip);
    const ticket = begin({ admission });
    tickets.set(request, ticket);
    reply.raw.once('close', () => {
      ticket.end();
      arriving.get(request)?.release();
      decodedBodies.get(request)?.release();
    });
  });

  // While the body arrives, its bytes are counted in the receive budget (per connection, per peer address, in
  // total); a body that is not arriving can be made to give them back to one that is.
  app.addHook('preParsing', async (request, _reply, payload) => {
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        if (body.take(chunk.length)) done(null, chunk);
        else done(new BusyError('too many export bodies arriving at once; retry later', 'receive_busy', RETRY_AFTER_RECEIVING));
      },
    });
    const body = receiving.open(request.ip, (reason: EvictionReason) => counted.destroy(evicted(reason)));
    arriving.set(request, body);
    // Not stream.pipeline: a refused body must leave the connection open for its answer (discardBody unpipes it).
    payload.pipe(counted);
    payload.once('error', (error) => counted.destroy(error));
    payload.once('close', () => {
      if (!request.raw.complete) counted.destroy(new PermanentError('the connection closed before the body arrived', 'not_received'));
    });
    return counted;
  });

  // The slot is taken once the body is complete: a sender that opens exports and never finishes them holds none,
  // however often it reconnects.
  app.addHook('preValidation', async (request) => {
    arriving.get(request)?.release();
    const ticket = tickets.get(request);
    if (ticket !== undefined) admit({ admission }, ticket);
  });

  app.setErrorHandler(async (caught: FastifyError | Error, request, reply) => {
    const error = fromFastify(caught, limits);
    const format = formatOf(request.headers['content-type']) ?? 'json';
    const failure = exportFailureOf(error);
    const status = failure.httpStatus;
    // Every export that is not answered 200 ends here: refused before the consume (size, auth, overload,
    // encoding) or failed in it.
    observationOf(request).failed(failure);
    if (failure.result === 'failed') request.log.error({ err: error }, 'export failed');
    else request.log.warn({ reason: failure.reason, status }, `export refused: ${failure.message}`);
    if (failure.retryAfterSeconds !== undefined) void reply.header('retry-after', String(failure.retryAfterSeconds));
    if (status === 401) void reply.header('www-authenticate', 'Bearer realm="extscope ingest"');
    if (!request.raw.readableEnded && !request.raw.destroyed) {
      // Refused before its body was read (size, auth, overload): take in what the sender is still writing, up to
      // a bound, so that it reads this answer rather than a reset connection; then close the connection.
      await discardBody(request);
      void reply.header('connection', 'close');
    }
    return reply
      .code(status)
      .header('content-type', CONTENT_TYPE[format])
      .send(encodeStatusBody(format, failure.rpcCode, failure.message));
  });

  const body = async (request: FastifyRequest): Promise<{ format: OtlpFormat; bytes: Buffer }> => {
    const format = formatOf(request.headers['content-type']);
    if (format === undefined || !Buffer.isBuffer(request.body)) throw new PermanentError(UNSUPPORTED_MEDIA_TYPE, 'unsupported_media_type', 415);
    const decoded = await decodedBody(request.body, request.headers['content-encoding'], limits.maxDecompressedBytes, decompression);
    decodedBodies.set(request, decoded);
    return { format, bytes: decoded.bytes };
  };

  const respond = (reply: FastifyReply, signal: Signal, format: OtlpFormat, partial: PartialSuccess | undefined): FastifyReply => {
    return reply
      .code(200)
      .header('content-type', CONTENT_TYPE[format])
      .send(encodeExportResponse(signal, format, partial));
  };

  for (const signal of ['metrics', 'traces'] as const) {
    app.post(`/${signal}`, { bodyLimit: limits.maxBodyBytes }, async (request, reply) => {
      const { format, bytes } = await body(request);
      const partial = await consumeExport(options, signal, bytes, format);
      observationOf(request).consumed(partial);
      return respond(reply, signal, format, partial);
    });
  }
};

/** fastify's own refusals of a body, in the receiver's words. */
function fromFastify(error: FastifyError | Error, limits: ReceiverLimits): Error {
  const code = (error as FastifyError).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new PermanentError(`the body is larger than ${limits.maxBodyBytes} bytes`, 'body_too_large', 413);
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new PermanentError(UNSUPPORTED_MEDIA_TYPE, 'unsupported_media_type', 415);
  return error;
}

/** Seconds a sender is asked to wait when the bytes of arriving bodies are spent (or its own were taken back). */
const RETRY_AFTER_RECEIVING = 1;

function evicted(reason: EvictionReason): BusyError {
  return reason === 'stalled'
    ? new BusyError('the body stopped arriving while other exports needed its room; retry', 'body_stalled', RETRY_AFTER_RECEIVING)
    : new BusyError('this address had more than its share of the bodies arriving at once; retry', 'receive_share', RETRY_AFTER_RECEIVING);
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
    // Its bytes go nowhere now, so nothing downstream may hold the body back.
    raw.unpipe();
    raw.on('data', onData);
    raw.once('end', done);
    raw.once('error', done);
    raw.once('close', done);
    raw.resume();
  });
}
