import type { MetricsConsumer, TracesConsumer } from '../../model/consumer.js';
import { rejectedCount } from '../../model/rejections.js';
import type { OtlpFormat, PartialSuccess, Protocol, Signal } from '../../otlp/codec.js';
import type { ExportMetricsServiceRequest, ExportTraceServiceRequest } from '../../otlp/messages.js';
import { exportFailureOf } from '../export-failure.js';
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

/** Failures {@link consumeExport} has counted: the transport answers them without counting them again. */
const counted = new WeakSet<object>();

/** Whether `error` came out of {@link consumeExport}, which counted it; a refusal before the consume did not. */
export const countedByConsume = (error: unknown): boolean => typeof error === 'object' && error !== null && counted.has(error);

/**
 * Decode → the next consumer → the collector's own counts, for both transports: every outcome of the consume is
 * counted here, once (accepted, partial, or the failure as export-failure.ts maps it, which is rethrown for the
 * transport to answer). What was refused point by point comes back as the answer's `partial_success` (undefined
 * when nothing was). `startedNs` is when the transport began receiving the export (process.hrtime).
 */
export async function consumeExport(pipeline: ExportPipeline, protocol: Protocol, signal: Signal, bytes: Buffer, format: OtlpFormat, startedNs: bigint): Promise<PartialSuccess | undefined> {
  const seconds = (): number => Number(process.hrtime.bigint() - startedNs) / 1e9;
  try {
    const answer = await decodeAndConsume(pipeline, signal, bytes, format);
    pipeline.telemetry.exportFinished(protocol, signal, answer === undefined ? 'accepted' : 'partial', seconds());
    return answer;
  } catch (error) {
    const failure = exportFailureOf(error);
    pipeline.telemetry.exportFinished(protocol, signal, failure.result, seconds(), failure.reason);
    const thrown = typeof error === 'object' && error !== null ? error : new Error(String(error));
    counted.add(thrown);
    throw thrown;
  }
}

async function decodeAndConsume(pipeline: ExportPipeline, signal: Signal, bytes: Buffer, format: OtlpFormat): Promise<PartialSuccess | undefined> {
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
