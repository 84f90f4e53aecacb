import type { CollectorLimits, RetentionConfig } from '../config.js';
import type { ExportMetricsServiceRequest, ExportTraceServiceRequest } from '../otlp/messages.js';
import type { Store } from '../store/store.js';
import { MetricsNormaliser } from './metrics-normaliser.js';
import type { IgnoredReason } from './points.js';
import { SpansNormaliser } from './spans-normaliser.js';

export interface MetricsOutcome {
  applied: number;
  duplicates: number;
  ignored: Map<IgnoredReason, number>;
  rejected: number;
  rejectedReason: string | undefined;
}

export interface TracesOutcome {
  stored: number;
  ignored: number;
  rejected: number;
  rejectedReason: string | undefined;
}

/** What a receiver hands decoded exports to (the OpenTelemetry Collector's "consumer"). */
export interface Consumer {
  consumeMetrics(request: ExportMetricsServiceRequest): Promise<MetricsOutcome>;
  consumeTraces(request: ExportTraceServiceRequest): Promise<TracesOutcome>;
}

/** Normalise (validate everything) → store (one transaction). Throws `ExportRejection` for a refused export. */
export function createPipeline(store: Store, limits: CollectorLimits, retention: RetentionConfig, clock: () => number): Consumer {
  const metrics = new MetricsNormaliser(limits.maxAttributeLength);
  const spans = new SpansNormaliser(limits.maxAttributeLength);
  return {
    async consumeMetrics(request) {
      const batch = metrics.normalise(request, {
        now: clock(),
        maxAttributeLength: limits.maxAttributeLength,
        maxFutureSkewMs: limits.maxFutureSkewMs,
        dedupWindowMs: retention.dedupHours * 3_600_000,
      });
      const result = await store.applyMetrics(batch);
      return { ...result, ignored: batch.ignored, rejected: batch.rejected, rejectedReason: batch.rejectedReason };
    },
    async consumeTraces(request) {
      const batch = spans.normalise(request, {
        now: clock(),
        maxFutureSkewMs: limits.maxFutureSkewMs,
        maxSpansPerExport: limits.maxSpansPerExport,
      });
      const stored = await store.applySpans(batch);
      return { stored, ignored: batch.ignored, rejected: batch.rejected, rejectedReason: batch.rejectedReason };
    },
  };
}
