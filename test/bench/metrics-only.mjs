/**
 * Sets up a benchmark worker's variant: `bare` loads nothing; `metrics` enables the agent as the zero-code entry
 * does for metrics only (a meter provider, no tracing, no context manager), read on demand. Call it before the
 * MCP SDK is required, so the agent's hooks patch it. Resolves to what reads the requests counted so far
 * (`undefined` for `bare`).
 */
export async function metricsOnlyVariant(variant) {
  if (variant !== 'metrics') return async () => undefined;
  const { MeterProvider } = await import('@opentelemetry/sdk-metrics');
  const { OnDemandReader } = await import('../support/on-demand-reader.mjs');
  const { ExtscopeInstrumentation } = await import('extscope');
  const reader = new OnDemandReader();
  new ExtscopeInstrumentation({ spans: false }).setMeterProvider(new MeterProvider({ readers: [reader] }));
  return async () => {
    const { resourceMetrics } = await reader.collect();
    return resourceMetrics.scopeMetrics
      .flatMap((scope) => scope.metrics)
      .filter((metric) => metric.descriptor.name === 'extscope.requests')
      .flatMap((metric) => metric.dataPoints)
      .reduce((sum, point) => sum + point.value, 0);
  };
}
