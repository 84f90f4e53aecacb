// A metric reader that collects only when asked (`reader.collect()`), with cumulative temporality: how the
// benchmarks read the agent's exact counts. Import it where a variant loads the metrics SDK anyway (dynamically,
// in the harnesses whose uninstrumented variant must not load it).
import { AggregationTemporality, MetricReader } from '@opentelemetry/sdk-metrics';

export class OnDemandReader extends MetricReader {
  constructor(options = {}) {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE, ...options });
  }
  async onForceFlush() {}
  async onShutdown() {}
}
