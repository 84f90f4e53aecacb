import type { MetricsOutcome, TracesOutcome } from '../../model/consumer.js';
import type { Protocol, Signal } from '../../otlp/codec.js';

export type ExportResult = 'accepted' | 'partial' | 'rejected' | 'throttled' | 'unauthorized' | 'failed';

/** What a receiver reports about each export; the service hands it the collector's own metrics. */
export interface ReceiverTelemetry {
  exportFinished(protocol: Protocol, signal: Signal, result: ExportResult, seconds: number, reason?: string): void;
  metricsConsumed(outcome: MetricsOutcome): void;
  tracesConsumed(outcome: TracesOutcome): void;
}
