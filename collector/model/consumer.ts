/**
 * The pipeline contract (after the OpenTelemetry Collector's `consumer.Metrics`): each stage holds only the
 * next consumer and hands it what it made. What comes back is how it went: the counts the OTLP answer
 * (`partial_success`) and the collector's own metrics need. A failure is thrown (model/errors.ts).
 */
import type { IgnoredReason } from './batches.js';
import type { AppliedCount } from './records.js';
import type { RejectedPoints } from './rejections.js';

export interface MetricsOutcome {
  applied: number;
  /** Points already applied before (a retry): not counted again. */
  duplicates: number;
  ignored: ReadonlyMap<IgnoredReason, number>;
  /** Points refused one by one (reported as partial success), by reason and service. */
  rejections: readonly RejectedPoints[];
  /** What the sender is told about them. */
  rejectedReason: string | undefined;
  /** The increments the store applied (new ones only), per stored series: what the collector's request counters add. */
  counts: readonly AppliedCount[];
}

export interface TracesOutcome {
  stored: number;
  ignored: number;
  rejected: number;
  rejectedReason: string | undefined;
}

export interface MetricsConsumer<T> {
  consumeMetrics(data: T): Promise<MetricsOutcome>;
}

export interface TracesConsumer<T> {
  consumeTraces(data: T): Promise<TracesOutcome>;
}
