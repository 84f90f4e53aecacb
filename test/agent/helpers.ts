/**
 * Helpers for the agent's unit tests: no global OpenTelemetry setup and no MCP SDK (see harness.ts for those).
 * Metrics are read the way an application's SDK reads them: a reader on a meter provider the recorder is bound to.
 */
import { type Attributes, trace } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { type DeclaredExtensions, UNKNOWN_DECLARATION } from '../../agent/observe/extension-map.js';
import type { RequestFacts } from '../../agent/observe/request-facts.js';
import { type PipelineOptions, RequestPipeline } from '../../agent/record/request-pipeline.js';
import { OnDemandReader } from '../support/on-demand-reader.mjs';

export const LIMITS = { maxIds: 64, maxIdLength: 128 };

export interface Point {
  attributes: Attributes;
  value: number;
}

/** A meter provider whose metrics are read on demand: `points(name)` gives every point of one metric. */
export function metricReader() {
  const reader = new OnDemandReader({ cardinalitySelector: () => 1_000_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    meter: meterProvider.getMeter('test'),
    async points(name: string): Promise<Point[]> {
      const { resourceMetrics } = await reader.collect();
      return resourceMetrics.scopeMetrics
        .flatMap((scope) => scope.metrics)
        .filter((metric) => metric.descriptor.name === name)
        .flatMap((metric) => metric.dataPoints.map((point) => ({ attributes: point.attributes, value: point.value as number })));
    },
    async sum(name: string, match: Attributes = {}): Promise<number> {
      return (await this.points(name))
        .filter((point) => Object.entries(match).every(([key, value]) => point.attributes[key] === value))
        .reduce((total, point) => total + point.value, 0);
    },
  };
}

/** A request pipeline with the default limits, bound to a fresh on-demand reader. Spans off unless asked. */
export function pipelineWithReader(options: Partial<PipelineOptions> = {}) {
  const metrics = metricReader();
  const pipeline = new RequestPipeline({ spans: false, captureSettings: false, limits: LIMITS, cardinalityLimit: 1000, maxStreams: 10_000, ...options }, () =>
    trace.getTracer('unused'),
  );
  pipeline.bind(metrics.meter);
  return { pipeline, metrics };
}

export const declared = (ids: string[], extra: Partial<DeclaredExtensions> = {}): DeclaredExtensions => ({
  declaration: 'declared',
  ids,
  settings: ids.map(() => ({})),
  invalid: 0,
  dropped: 0,
  ...extra,
});

/** Request facts as the readers produce them, with what a test does not care about left unknown. */
export function facts(values: Partial<RequestFacts> = {}): RequestFacts {
  return {
    method: 'tools/call',
    id: 1,
    era: 'modern',
    protocolVersion: undefined,
    clientName: undefined,
    clientVersion: undefined,
    client: UNKNOWN_DECLARATION,
    target: undefined,
    targetKind: undefined,
    traceCarrier: undefined,
    ...values,
  };
}
