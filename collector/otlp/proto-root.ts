import protobuf from 'protobufjs/minimal.js';
import root from './generated/otlp-proto.js';

/**
 * The official OTLP message definitions as protobufjs static code, generated from a pinned opentelemetry-proto
 * release by scripts/generate-otlp-proto.mjs (decode, encode, fromObject, toObject; no reflection at run time).
 */

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

const { collector } = (root as unknown as GeneratedRoot).opentelemetry.proto;

export const MetricsRequest = collector.metrics.v1.ExportMetricsServiceRequest;
export const MetricsResponse = collector.metrics.v1.ExportMetricsServiceResponse;
export const TraceRequest = collector.trace.v1.ExportTraceServiceRequest;
export const TraceResponse = collector.trace.v1.ExportTraceServiceResponse;

/**
 * `google.rpc.Status` (code = 1, message = 2), the body OTLP/HTTP requires on 4xx/5xx. The OTLP definitions do
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
