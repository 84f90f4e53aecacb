import type { MetricsConsumer, TracesConsumer } from '../../model/consumer.js';
import { rejectedCount } from '../../model/rejections.js';
import type { OtlpFormat, PartialSuccess, Signal } from '../../otlp/codec.js';
import type { ExportMetricsServiceRequest, ExportTraceServiceRequest } from '../../otlp/messages.js';
import type { DecodePool } from './decode-pool.js';
import type { ReceiverTelemetry } from './telemetry.js';

/** Where a receiver hands an export once its transport is done with it: the same for OTLP/HTTP and OTLP/gRPC. */
export interface ExportPipeline {
  metrics: MetricsConsumer<ExportMetricsServiceRequest>;
  traces: TracesConsumer<ExportTraceServiceRequest>;
  /** Decodes large bodies off the main thread. */
  decoder: DecodePool;
  telemetry: ReceiverTelemetry;
}

/**
 * Decode → the next consumer, for both transports. What was refused point by point comes back as the answer's
 * `partial_success` (undefined when nothing was); a failure is thrown for the transport to answer. The export's
 * outcome is counted by the transport, which observes the whole export around this (an ExportObservation,
 * telemetry.ts); what the consume stored is counted here.
 */
export async function consumeExport(pipeline: ExportPipeline, signal: Signal, bytes: Buffer, format: OtlpFormat): Promise<PartialSuccess | undefined> {
  if (signal === 'metrics') {
    const outcome = await pipeline.metrics.consumeMetrics(await pipeline.decoder.decodeMetrics(bytes, format));
    pipeline.telemetry.metricsConsumed(outcome);
    return partial(rejectedCount(outcome.rejections), outcome.rejectedReason);
  }
  const outcome = await pipeline.traces.consumeTraces(await pipeline.decoder.decodeTraces(bytes, format));
  pipeline.telemetry.tracesConsumed(outcome);
  return partial(outcome.rejected, outcome.rejectedReason);
}

function partial(rejected: number, message: string | undefined): PartialSuccess | undefined {
  return rejected > 0 ? { rejected, message: message ?? 'some items were refused' } : undefined;
}
