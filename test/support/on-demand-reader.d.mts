import { MetricReader, type MetricReaderOptions } from '@opentelemetry/sdk-metrics';

export declare class OnDemandReader extends MetricReader {
  constructor(options?: MetricReaderOptions);
  protected onForceFlush(): Promise<void>;
  protected onShutdown(): Promise<void>;
}
