import type { FastifyPluginAsync } from 'fastify';
import type { StoreLifecycle } from '../store/store.js';

export interface HealthOptions {
  store: Pick<StoreLifecycle, 'health'>;
  /** True once shutdown began: exports are turned away. */
  draining: () => boolean;
  /** The OTLP/gRPC receiver's port while it listens; null when it is off. */
  grpcPort?: () => number | null;
}

/**
 * `GET /healthz`: the process answers. `GET /readyz`: it can take exports: the database is writable, its schema
 * is the one this build knows, and it is not shutting down. Both are unauthenticated (for orchestrators) and
 * reveal nothing else.
 */
export const healthRoutes: FastifyPluginAsync<HealthOptions> = async (app, { store, draining, grpcPort = () => null }) => {
  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    const health = await store.health();
    const reasons: string[] = [];
    if (!health.writable) reasons.push(`database not writable${health.error === undefined ? '' : `: ${health.error}`}`);
    if (health.schemaVersion !== health.latestSchemaVersion) {
      reasons.push(`schema version ${health.schemaVersion}, expected ${health.latestSchemaVersion}`);
    }
    if (draining()) reasons.push('shutting down');
    const ready = reasons.length === 0;
    // Both receivers feed the same store through the same gate: ready means an export sent now to either is stored.
    const receivers = { otlpHttp: true, otlpGrpc: grpcPort() !== null };
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not ready', schemaVersion: health.schemaVersion, reasons, receivers });
  });
};
