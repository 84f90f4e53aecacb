import type { FastifyPluginAsync } from 'fastify';
import type { SelfMetrics } from './self-metrics.js';

/** `GET /metrics`: Prometheus text exposition of the collector's health and the matrix gauges. */
export const prometheusRoute: FastifyPluginAsync<{ metrics: SelfMetrics }> = async (app, { metrics }) => {
  app.get('/metrics', async (_request, reply) => {
    await metrics.refreshMatrix();
    return reply.header('content-type', metrics.registry.contentType).send(await metrics.registry.metrics());
  });
};
