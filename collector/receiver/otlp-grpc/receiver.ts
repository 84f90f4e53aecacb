import { type ServerHttp2Stream, constants as http2Constants } from 'node:http2';
import {
  Metadata,
  Server,
  ServerCredentials,
  type ServerInterceptingCallInterface,
  ServerInterceptingCall,
  type ServerInterceptor,
  type ServerUnaryCall,
  type sendUnaryData,
  setLogger,
  status as GrpcStatus,
} from '@grpc/grpc-js';
import type { FastifyBaseLogger } from 'fastify';
import type { Component } from '../../model/component.js';
import { BusyError, PermanentError } from '../../model/errors.js';
import { type Signal, encodeExportResponse } from '../../otlp/codec.js';
import type { DecompressionBudget } from '../otlp/body.js';
import type { Ticket } from '../otlp/admission.js';
import { type IngestGate, admit, authenticate, begin } from '../otlp/gate.js';
import type { ArrivingBody, EvictionReason, ReceiveBudget } from '../otlp/receive-budget.js';
import { type ExportPipeline, consumeExport } from '../otlp/pipeline.js';
import { ExportObservation } from '../otlp/telemetry.js';
import { exportService, signalOfPath } from './export-service.js';
import { grpcFailureOf } from './status.js';

interface GrpcReceiverLimits {
  /**
   * Largest message, as received and after decompression (grpc-js applies one limit to both): past it,
   * RESOURCE_EXHAUSTED without RetryInfo, before the message is decoded.
   */
  maxMessageBytes: number;
  /** How long a call's message may take to arrive after its metadata; then DEADLINE_EXCEEDED and the stream is closed. */
  receiveTimeoutMs: number;
}

export interface OtlpGrpcReceiverOptions {
  host: string;
  /** 0: any free port. */
  port: number;
  pipeline: ExportPipeline;
  gate: IngestGate;
  limits: GrpcReceiverLimits;
  /** Bytes of received messages held at once across all exports, shared with OTLP/HTTP's decompression. */
  decompression: DecompressionBudget;
  /** Bytes of messages whose call has not arrived in full (no half-close yet), shared with OTLP/HTTP's arriving bodies. */
  receiving: ReceiveBudget;
  log: Pick<FastifyBaseLogger, 'warn' | 'error'>;
  /** How long shutdown waits for calls in progress before closing connections. */
  shutdownGraceMs: number;
}

/** Seconds a sender is asked to wait when the budget of held messages is spent. */
const RETRY_AFTER_BUDGET = 1;
/** What grpc-js answers (INTERNAL) for a compressed message it cannot inflate (server-interceptors.js, decompressMessage). */
const DECOMPRESS_FAILED = 'Failed to decompress message';

/**
 * grpc-js sends a status before the sender half-closed as a trailers-only answer with END_STREAM, and leaves the
 * stream open until the sender ends its side, which a stalled sender never does. gRPC's HTTP/2 protocol has the
 * server follow such an answer with RST_STREAM(NO_ERROR); grpc-js keeps its stream private, hence the narrow
 * look (a grpc-js without it leaves the stream to the sender, as before).
 */
function closeStream(call: object): void {
  const stream = (call as { stream?: Partial<Pick<ServerHttp2Stream, 'close' | 'closed'>> }).stream;
  if (stream !== undefined && stream.closed === false && typeof stream.close === 'function') stream.close(http2Constants.NGHTTP2_NO_ERROR);
}

function evictedMessage(reason: EvictionReason): BusyError {
  return reason === 'stalled'
    ? new BusyError('the call stopped arriving (no half-close) while other exports needed its room; retry', 'body_stalled', RETRY_AFTER_BUDGET)
    : new BusyError('this address had more than its share of the exports arriving at once; retry', 'receive_share', RETRY_AFTER_BUDGET);
}

/** The receiver started last, whose log takes grpc-js's own lines (grpc-js has one logger per process). */
let grpcLog: Pick<FastifyBaseLogger, 'warn'> | undefined;
/** What grpc-js says on a failed bind, which {@link OtlpGrpcReceiver.start} reports itself, with the address and the fix. */
const BIND_FAILED = /^No address added out of total \d+ resolved/;

/**
 * grpc-js writes its errors to stderr itself (`E …`, beside the collector's log): they go to the receiver's log, as
 * warnings, instead.
 */
function routeGrpcLog(log: Pick<FastifyBaseLogger, 'warn'>): void {
  grpcLog = log;
  const warn = (...args: unknown[]): void => {
    const line = args.map(String).join(' ');
    if (!BIND_FAILED.test(line)) grpcLog?.warn(`grpc-js: ${line}`);
  };
  setLogger({ error: warn, info: warn, debug: warn });
}

/** A failed bind as the error `listen` gives (its code, address and port), so that it is reported as any port in use. */
function bindError(host: string, port: number, error: Error): Error {
  const code = /\b(EADDRINUSE|EACCES|EADDRNOTAVAIL)\b/.exec(error.message)?.[1];
  return Object.assign(new Error(`the OTLP/gRPC receiver cannot listen on ${host}:${port} (--grpc-port, or off): ${error.message}`, { cause: error }), {
    syscall: 'listen',
    code,
    address: host,
    port,
  });
}

/**
 * OTLP/gRPC receiver: `MetricsService/Export` and `TraceService/Export` on their own port (4317 by default),
 * with grpc-js. Each call passes the same gate as OTLP/HTTP before its message is read (the ingest token from the
 * `authorization` metadata, the failure limit per address, the shared in-flight admission), then takes the same
 * pipeline (decode → normalise → limit → store); `partial_success` and the status codes follow the OTLP
 * specification. Unknown services and methods are answered UNIMPLEMENTED by grpc-js.
 */
export class OtlpGrpcReceiver implements Component {
  private readonly server: Server;
  private boundPort: number | undefined;

  constructor(private readonly options: OtlpGrpcReceiverOptions) {
    this.server = new Server({
      'grpc.max_receive_message_length': options.limits.maxMessageBytes,
      interceptors: [this.gateInterceptor],
    });
    for (const signal of ['metrics', 'traces'] as const) this.server.addService(exportService(signal), { Export: this.exportHandler(signal) });
  }

  /** The port bound (also when asked for port 0); undefined before start. */
  get port(): number | undefined {
    return this.boundPort;
  }

  async start(): Promise<void> {
    if (this.boundPort !== undefined) return;
    const host = this.options.host.includes(':') && !this.options.host.startsWith('[') ? `[${this.options.host}]` : this.options.host;
    routeGrpcLog(this.options.log);
    this.boundPort = await new Promise<number>((resolve, reject) => {
      this.server.bindAsync(`${host}:${this.options.port}`, ServerCredentials.createInsecure(), (error, port) =>
        // grpc-js says only "No address added out of total 1 resolved"; say which address, and the cause it gives.
        error === null ? resolve(port) : reject(bindError(host, this.options.port, error)),
      );
    });
  }

  /** Stops taking calls; calls in progress get `shutdownGraceMs` to be answered before their connections close. */
  async shutdown(): Promise<void> {
    await new Promise<void>((resolve) => {
      const forced = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, this.options.shutdownGraceMs).unref();
      this.server.tryShutdown(() => {
        clearTimeout(forced);
        resolve();
      });
    });
  }

  /**
   * Runs when a call's metadata arrives, before its message is read: the token is checked there, and a call that
   * finds every admission slot taken is refused there, so a refused call costs neither memory nor decoding. A call
   * holds at most one admission slot, taken when it has arrived in full (its one message and the sender's
   * half-close): a call that sends its metadata (or its message) and then nothing holds no slot, and is ended
   * DEADLINE_EXCEEDED after `receiveTimeoutMs` (its sender's own deadline may be longer, or absent); its message's
   * bytes count meanwhile in the receive budget OTLP/HTTP bodies share. What the call holds is given back exactly
   * once ({@link Ticket.end}), on whichever path ends it: the handler's answer; a refusal here (a second message
   * on this unary call is INVALID_ARGUMENT, and nothing of the call is stored); or, when the handler never got the
   * call (grpc-js refused it itself: undecodable compression, past its deadline; or the sender cancelled before
   * half-closing), grpc-js ending it (`onCancel`, which it calls for every call at its end). A call the handler
   * took keeps its slot until the handler answers, even if the sender has gone: the store is still working.
   */
  private readonly gateInterceptor: ServerInterceptor = (method, call: ServerInterceptingCallInterface) => {
    const signal = signalOfPath(method.path);
    if (signal === undefined) return new ServerInterceptingCall(call);
    const { gate, pipeline, log, limits, receiving } = this.options;
    /** The call until the handler takes it (then the handler observes it, around the consume), or until it ends here. */
    const observation = new ExportObservation(pipeline.telemetry, 'grpc', signal);
    let ticket: Ticket | undefined;
    let message: ArrivingBody | undefined;
    /** Its message has been passed on (grpc-js holds it until the half-close, then calls the handler). */
    let delivered = false;
    /** The half-close has been passed on: the handler has the call and will answer it. */
    let handled = false;
    let answered = false;
    let deadline: NodeJS.Timeout | undefined;
    const answer = (): void => {
      answered = true;
      clearTimeout(deadline);
      ticket?.end();
      message?.release();
    };
    /** Ends the call with the status `error` maps to, before the handler has seen it. */
    const refuse = (error: unknown): void => {
      if (answered) return;
      const failure = grpcFailureOf(error);
      observation.failed(failure);
      log.warn({ reason: failure.reason, code: failure.status.code, protocol: 'grpc' }, `export refused: ${failure.status.details}`);
      answer();
      call.sendStatus(failure.status);
    };
    // grpc-js inflates a compressed message itself, and answers one that is not valid gzip INTERNAL ("Failed to
    // decompress message") from its own call object, past every interceptor's responder: that object's sendStatus
    // is the one place to see it. Bad input from the sender is INVALID_ARGUMENT (not retryable), as on OTLP/HTTP.
    const send = call.sendStatus.bind(call);
    call.sendStatus = (status) => {
      if (status.code === GrpcStatus.INTERNAL && status.details === DECOMPRESS_FAILED && !answered)
        refuse(new PermanentError('the message is not valid gzip', 'bad_gzip'));
      else send(status);
    };
    const peer = (): string => call.getConnectionInfo().remoteAddress ?? call.getPeer();
    return new ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, pass) => {
            const authorization = metadata.get('authorization')[0];
            try {
              authenticate(gate, typeof authorization === 'string' ? authorization : undefined, peer());
              ticket = begin(gate);
            } catch (error) {
              refuse(error);
              return;
            }
            deadline = setTimeout(() => {
              if (handled || answered) return;
              observation.failed({ result: 'rejected', reason: 'not_received' });
              log.warn({ reason: 'not_received', protocol: 'grpc' }, `export refused: its message did not arrive within ${limits.receiveTimeoutMs} ms`);
              answer();
              call.sendStatus({
                code: GrpcStatus.DEADLINE_EXCEEDED,
                details: `the message did not arrive within ${limits.receiveTimeoutMs} ms`,
                metadata: new Metadata(),
              });
              closeStream(call);
            }, limits.receiveTimeoutMs);
            pass(metadata);
          },
          onReceiveMessage: (received: Buffer, pass) => {
            if (answered) return;
            try {
              // Export is unary: a second message is a broken sender, refused before the handler sees the call.
              if (delivered) throw new PermanentError('Export is a unary call: it carries exactly one message, this call sent more', 'extra_message');
              message = receiving.open(peer(), (reason) => {
                refuse(evictedMessage(reason));
                closeStream(call);
              });
              if (!message.take(received.length)) throw new BusyError('too many exports arriving at once; retry later', 'receive_busy', RETRY_AFTER_BUDGET);
            } catch (error) {
              refuse(error);
              return;
            }
            delivered = true;
            pass(received);
          },
          onReceiveHalfClose: (pass) => {
            if (answered) return;
            // Without a message grpc-js answers UNIMPLEMENTED itself, through the responder below.
            if (delivered) {
              clearTimeout(deadline);
              message?.release();
              try {
                admit(gate, ticket as Ticket);
              } catch (error) {
                refuse(error);
                return;
              }
              handled = true;
            }
            pass();
          },
          onCancel: () => {
            clearTimeout(deadline);
            if (handled || answered) return;
            answer();
            observation.failed({ result: 'rejected', reason: delivered ? 'cancelled' : 'not_received' });
          },
        }),
      // The handler's answer: a response message (then OK), or an error status.
      sendMessage: (message, next) => {
        answer();
        next(message);
      },
      sendStatus: (status, next) => {
        answer();
        next(status);
      },
    });
  };

  private exportHandler(signal: Signal) {
    const { pipeline, decompression, log } = this.options;
    return (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>): void => {
      // The gate's observation stops where it hands the call over (`handled`): from here to the answer, it is this one's.
      const observation = new ExportObservation(pipeline.telemetry, 'grpc', signal);
      const bytes = call.request;
      const receive = async () => {
        // grpc-js has already inflated a compressed message (bounded by the message limit); what all calls hold
        // at once while they decode and store is bounded by the budget OTLP/HTTP's gunzip draws from.
        if (!decompression.tryTake(bytes.length))
          throw new BusyError('too much decompression in progress; retry later', 'decompression_busy', RETRY_AFTER_BUDGET);
        try {
          return await consumeExport(pipeline, signal, bytes, 'protobuf');
        } finally {
          decompression.give(bytes.length);
        }
      };
      receive().then(
        (partial) => {
          observation.consumed(partial);
          callback(null, encodeExportResponse(signal, 'protobuf', partial) as Buffer);
        },
        (error: unknown) => {
          const failure = grpcFailureOf(error);
          observation.failed(failure);
          if (failure.result === 'failed') log.error({ err: error, protocol: 'grpc' }, 'export failed');
          else log.warn({ reason: failure.reason, code: failure.status.code, protocol: 'grpc' }, `export refused: ${failure.status.details}`);
          callback(failure.status);
        },
      );
    };
  }
}
