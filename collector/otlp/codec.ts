import { PermanentError } from '../model/errors.js';
import { JsonMappingError, parseOtlpJson } from './json-mapping.js';
import type { ExportMetricsServiceRequest, ExportTraceServiceRequest } from './messages.js';
import { MetricsRequest, MetricsResponse, type MessageType, TraceRequest, TraceResponse, encodeStatus } from './proto-root.js';

/** The two OTLP/HTTP encodings; a response always uses the request's. */
export type OtlpFormat = 'protobuf' | 'json';
export type Signal = 'metrics' | 'traces';
/** The transport an export arrived on: OTLP/HTTP or OTLP/gRPC. */
export type Protocol = 'http' | 'grpc';

export const CONTENT_TYPE: Record<OtlpFormat, string> = {
  protobuf: 'application/x-protobuf',
  json: 'application/json',
};

/** The body is not a well-formed OTLP export request. */
class OtlpDecodeError extends PermanentError {
  override readonly name = 'OtlpDecodeError';

  constructor(message: string) {
    super(message, 'malformed');
  }
}

function decode<T>(type: MessageType<unknown>, body: Buffer, format: OtlpFormat): T {
  try {
    if (format === 'protobuf') return type.decode(body) as T;
    return type.fromObject(parseOtlpJson(body.toString('utf8'))) as T;
  } catch (error) {
    if (error instanceof JsonMappingError) throw new OtlpDecodeError(error.message);
    // protobufjs throws RangeError/Error on truncated or malformed input, and on nesting deeper than its recursion
    // limit ("maximum nesting depth exceeded").
    throw new OtlpDecodeError(`malformed ${format === 'protobuf' ? 'protobuf' : 'OTLP/JSON'} body: ${(error as Error).message}`);
  }
}

export function decodeMetricsRequest(body: Buffer, format: OtlpFormat): ExportMetricsServiceRequest {
  return decode<ExportMetricsServiceRequest>(MetricsRequest, body, format);
}

export function decodeTraceRequest(body: Buffer, format: OtlpFormat): ExportTraceServiceRequest {
  return decode<ExportTraceServiceRequest>(TraceRequest, body, format);
}

export interface PartialSuccess {
  rejected: number;
  message: string;
}

/** The Export*ServiceResponse, with `partial_success` only when something was refused. */
export function encodeExportResponse(signal: Signal, format: OtlpFormat, partial: PartialSuccess | undefined): Buffer | string {
  const type = signal === 'metrics' ? MetricsResponse : TraceResponse;
  const counter = signal === 'metrics' ? 'rejectedDataPoints' : 'rejectedSpans';
  const object =
    partial === undefined || partial.rejected === 0 ? {} : { partialSuccess: { [counter]: String(partial.rejected), errorMessage: partial.message } };
  const message = type.fromObject(object);
  if (format === 'protobuf') return Buffer.from(type.encode(message).finish());
  return JSON.stringify(type.toObject(message, { longs: String }));
}

export function encodeStatusBody(format: OtlpFormat, code: number, message: string): Buffer | string {
  if (format === 'protobuf') return Buffer.from(encodeStatus(code, message));
  return JSON.stringify({ code, message });
}
