import type { ServiceDefinition, UntypedHandleCall } from '@grpc/grpc-js';
import type { Signal } from '../../otlp/codec.js';

/**
 * The two OTLP/gRPC services, as opentelemetry-proto names them (`opentelemetry/proto/collector/{metrics,trace}/v1/
 * *_service.proto`: `service MetricsService { rpc Export(ExportMetricsServiceRequest) returns (…Response) }`).
 * Messages travel as bytes: the request is decoded with the same generated OTLP definitions (and the same decode
 * pool) as on OTLP/HTTP, after admission, not inside grpc-js; the response is encoded by the shared codec.
 * The OpenTelemetry JS gRPC exporters call the same paths the same way (otlp-grpc-exporter-base).
 */
const EXPORT_PATH: Record<Signal, string> = {
  metrics: '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export',
  traces: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
};

const bytes = (value: Buffer): Buffer => value;

export type ExportService = ServiceDefinition<{ Export: UntypedHandleCall }>;

/** One service with its one method, `Export`, passing the messages through as bytes. */
export function exportService(signal: Signal): ExportService {
  return {
    Export: {
      path: EXPORT_PATH[signal],
      requestStream: false,
      responseStream: false,
      requestSerialize: bytes,
      requestDeserialize: bytes,
      responseSerialize: bytes,
      responseDeserialize: bytes,
    },
  };
}

/** The signal of an export path; undefined for any other method (grpc-js answers those UNIMPLEMENTED). */
export function signalOfPath(path: string): Signal | undefined {
  if (path === EXPORT_PATH.metrics) return 'metrics';
  if (path === EXPORT_PATH.traces) return 'traces';
  return undefined;
}
