import type { Signal } from '../otlp/codec.js';
import type { MetricsOutcome, TracesOutcome } from '../processing/pipeline.js';

export type ExportResult = 'accepted' | 'partial' | 'rejected' | 'throttled' | 'unauthorized' | 'failed';

/** What the receiver reports about itself; the ops module turns it into Prometheus metrics. */
export interface ReceiverTelemetry {
  exportFinished(signal: Signal, result: ExportResult, seconds: number, reason?: string): void;
  metricsConsumed(outcome: MetricsOutcome): void;
  tracesConsumed(outcome: TracesOutcome): void;
}

export const NO_TELEMETRY: ReceiverTelemetry = {
  exportFinished() {},
  metricsConsumed() {},
  tracesConsumed() {},
};
