import type { FastifyPluginAsync } from 'fastify';
import type { StoreHealth, StoreLifecycle } from '../store/store.js';

export interface HealthOptions {
  store: Pick<StoreLifecycle, 'health'>;
  /** True once shutdown began: exports are turned away. */
  draining: () => boolean;
  /** The OTLP/gRPC receiver's port while it listens; null when it is off. */
  grpcPort?: () => number | null;
  /** Exports admitted now, and how many may be: at the limit, a new export is answered 503. */
  exports?: () => { inFlight: number; limit: number };
  /** How long /readyz waits for the database before it answers not ready (default {@link READY_TIMEOUT_MS}). */
  timeoutMs?: number;
}

/** Well inside an orchestrator's usual probe timeout (Kubernetes: 1 s default, often raised to a few). */
export const READY_TIMEOUT_MS = 2000;

/**
 * `GET /healthz`: the process answers. `GET /readyz`: it can take exports: the database is writable, its schema
 * is the one this build knows, it is not shutting down, and its exports are not all taken (saturated: a new
 * export would be answered 503 now). It answers within `timeoutMs` whatever the database does: a database that
 * does not answer (PostgreSQL paused, a lost network) is a reason, not a hung probe; one check runs at a time and
 * probes arriving meanwhile share it. Both are unauthenticated (for orchestrators) and reveal nothing else.
 */
export const healthRoutes: FastifyPluginAsync<HealthOptions> = async (
  app,
  { store, draining, grpcPort = () => null, exports, timeoutMs = READY_TIMEOUT_MS },
) => {
  app.get('/healthz', async () => ({ status: 'ok' }));

  let checking: Promise<StoreHealth> | undefined;
  const health = (): Promise<StoreHealth | undefined> => {
    checking ??= store.health().finally(() => (checking = undefined));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, timeoutMs, undefined)));
    return Promise.race([checking, timeout]).finally(() => clearTimeout(timer));
  };

  app.get('/readyz', async (_request, reply) => {
    const checked = await health();
    const reasons: string[] = [];
    if (checked === undefined) reasons.push(`database did not answer within ${timeoutMs} ms`);
    else {
      if (!checked.writable) reasons.push(`database not writable${checked.error === undefined ? '' : `: ${checked.error}`}`);
      if (checked.schemaVersion !== checked.latestSchemaVersion)
        reasons.push(`schema version ${checked.schemaVersion}, expected ${checked.latestSchemaVersion}`);
    }
    if (draining()) reasons.push('shutting down');
    const load = exports?.();
    if (load !== undefined && load.inFlight >= load.limit)
      reasons.push(`saturated: ${load.inFlight} exports in progress, the limit (EXTSCOPE_MAX_IN_FLIGHT) is ${load.limit}`);
    const ready = reasons.length === 0;
    // Both receivers feed the same store through the same gate: ready means an export sent now to either is stored.
    const receivers = { otlpHttp: true, otlpGrpc: grpcPort() !== null };
    return reply.code(ready ? 200 : 503).send({
      status: ready ? 'ready' : 'not ready',
      schemaVersion: checked?.schemaVersion ?? null,
      reasons,
      receivers,
      ...(load === undefined ? {} : { exports: load }),
    });
  });
};
