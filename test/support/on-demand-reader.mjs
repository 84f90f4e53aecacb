// A metric reader that collects only when asked (`reader.collect()`), with cumulative temporality: how the tests
// and benchmarks read the agent's exact counts. Plain JavaScript so that fixtures and benchmarks run by node itself
// can import it too; a harness whose uninstrumented variant must not load the metrics SDK imports it dynamically.
import { AggregationTemporality, MetricReader } from '@opentelemetry/sdk-metrics';

export class OnDemandReader extends MetricReader {
  constructor(options = {}) {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE, ...options });
  }
  async onForceFlush() {}
  async onShutdown() {}
}
