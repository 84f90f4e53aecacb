import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { FastifyPluginAsync } from 'fastify';
import type { SelfMetrics } from './self-metrics.js';

const gzipAsync = promisify(gzip);

/** Whether an Accept-Encoding header accepts gzip (Prometheus sends `gzip`; `gzip;q=0` refuses it). */
function acceptsGzip(header: string | undefined): boolean {
  for (const part of (header ?? '').split(',')) {
    const [coding = '', ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase());
    if (coding !== 'gzip' && coding !== 'x-gzip') continue;
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}

/**
 * `GET /metrics`: Prometheus text exposition of the collector's health, its request counters and the fleet gauge,
 * gzipped when the scraper accepts it (Prometheus does; a large fleet's exposition is megabytes of repeated labels).
 * The compression runs on libuv's thread pool, not on the event loop.
 */
export const prometheusRoute: FastifyPluginAsync<{ metrics: SelfMetrics }> = async (app, { metrics }) => {
  app.get('/metrics', async (request, reply) => {
    const text = await metrics.exposition();
    void reply.header('content-type', metrics.registry.contentType).header('vary', 'accept-encoding');
    if (!acceptsGzip(request.headers['accept-encoding'])) return reply.send(text);
    return reply.header('content-encoding', 'gzip').send(await gzipAsync(text));
  });
};
