import type { MetricsOutcome, TracesOutcome } from '../../model/consumer.js';
import type { PartialSuccess, Protocol, Signal } from '../../otlp/codec.js';

export type ExportResult = 'accepted' | 'partial' | 'rejected' | 'throttled' | 'unauthorized' | 'failed';

/** What a receiver reports about each export; the service hands it the collector's own metrics. */
export interface ReceiverTelemetry {
  exportFinished(protocol: Protocol, signal: Signal, result: ExportResult, seconds: number, reason?: string): void;
  metricsConsumed(outcome: MetricsOutcome): void;
  tracesConsumed(outcome: TracesOutcome): void;
}

/**
 * One export as its transport sees it, from the moment it arrives to its answer (the OTel Collector's obsrecv
 * `StartMetricsOp` / `EndMetricsOp`). A transport begins one where an export enters it and ends it where the
 * export is answered, with the answer: whatever happened on the way (a refusal at the gate, a failure of the
 * consume) is counted once, by that end, and by nothing else.
 */
export class ExportObservation {
  private readonly startedNs = process.hrtime.bigint();

  constructor(
    private readonly telemetry: ReceiverTelemetry,
    private readonly protocol: Protocol,
    private readonly signal: Signal,
  ) {}

  /** The export was consumed: accepted whole, or with some points refused (the answer's `partial_success`). */
  consumed(partial: PartialSuccess | undefined): void {
    this.telemetry.exportFinished(this.protocol, this.signal, partial === undefined ? 'accepted' : 'partial', this.seconds());
  }

  /** The export was refused or failed; `failure` is how export-failure.ts maps it (or the transport's own refusal). */
  failed(failure: { result: ExportResult; reason: string }): void {
    this.telemetry.exportFinished(this.protocol, this.signal, failure.result, this.seconds(), failure.reason);
  }

  private seconds(): number {
    return Number(process.hrtime.bigint() - this.startedNs) / 1e9;
  }
}
