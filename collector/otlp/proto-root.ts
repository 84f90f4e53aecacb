import { createRequire } from 'node:module';

/**
 * The official OTLP message definitions, as protobufjs-generated code. Newer `@opentelemetry/otlp-transformer`
 * releases only encode (a hand-written writer); 0.57.x still ships this generated root with `decode`, so the
 * collector pins that release for decoding rather than parsing protobuf itself.
 */

interface Writer {
  uint32(value: number): Writer;
  int32(value: number): Writer;
  int64(value: number): Writer;
  string(value: string): Writer;
  fork(): Writer;
  ldelim(): Writer;
  finish(): Uint8Array;
}

export interface MessageType<T> {
  decode(reader: Uint8Array): T;
  encode(message: unknown): { finish(): Uint8Array };
  fromObject(object: Record<string, unknown>): T;
  toObject(message: T, options?: Record<string, unknown>): Record<string, unknown>;
}

interface GeneratedRoot {
  opentelemetry: {
    proto: {
      collector: {
        metrics: { v1: { ExportMetricsServiceRequest: MessageType<unknown>; ExportMetricsServiceResponse: MessageType<unknown> } };
        trace: { v1: { ExportTraceServiceRequest: MessageType<unknown>; ExportTraceServiceResponse: MessageType<unknown> } };
      };
    };
  };
}

const requireFromHere = createRequire(import.meta.url);
const root = requireFromHere('@opentelemetry/otlp-transformer/build/src/generated/root.js') as GeneratedRoot;
// protobufjs as the generated code resolves it, so both use one copy (and one Long).
const requireFromTransformer = createRequire(requireFromHere.resolve('@opentelemetry/otlp-transformer'));
const protobuf = requireFromTransformer('protobufjs/minimal') as { Writer: { create(): Writer } };

export const MetricsRequest = root.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
export const MetricsResponse = root.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse;
export const TraceRequest = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
export const TraceResponse = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse;

/**
 * `google.rpc.Status` (code = 1, message = 2), the body OTLP/HTTP requires on 4xx/5xx. The generated root does
 * not include it, so it is written with protobufjs' own Writer.
 */
export function encodeStatus(code: number, message: string): Uint8Array {
  return protobuf.Writer.create().uint32(8).int32(code).uint32(18).string(message).finish();
}

/** The `type_url` of `google.rpc.RetryInfo` inside a `google.protobuf.Any`. */
export const RETRY_INFO_TYPE_URL = 'type.googleapis.com/google.rpc.RetryInfo';

/**
 * `google.rpc.Status` with one detail, `google.rpc.RetryInfo { retry_delay: Duration { seconds } }` packed in an
 * `Any` (details = 3; Any: type_url = 1, value = 2; RetryInfo: retry_delay = 1; Duration: seconds = 1): what an
 * OTLP/gRPC server sends in `grpc-status-details-bin` to say when a throttled export may be retried.
 */
export function encodeStatusWithRetryInfo(code: number, message: string, retryDelaySeconds: number): Uint8Array {
  const writer = protobuf.Writer.create().uint32(8).int32(code).uint32(18).string(message);
  writer.uint32(26).fork().uint32(10).string(RETRY_INFO_TYPE_URL);
  writer.uint32(18).fork().uint32(10).fork().uint32(8).int64(retryDelaySeconds).ldelim().ldelim();
  return writer.ldelim().finish();
}
