import type { FastifyPluginAsync } from 'fastify';
import type { SelfMetrics } from './self-metrics.js';

/** `GET /metrics`: Prometheus text exposition of the collector's health, its request counters and the fleet gauge. */
export const prometheusRoute: FastifyPluginAsync<{ metrics: SelfMetrics }> = async (app, { metrics }) => {
  app.get('/metrics', async (_request, reply) => {
    await metrics.refresh();
    return reply.header('content-type', metrics.registry.contentType).send(await metrics.registry.metrics());
  });
};
