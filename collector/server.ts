import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import { type CollectorOptions, type ResolvedConfig, resolveConfig } from './config.js';
import { dashboardRoutes } from './http/dashboard.js';
import { healthRoutes } from './ops/health-routes.js';
import { prometheusRoute } from './ops/prometheus-route.js';
import { SelfMetrics } from './ops/self-metrics.js';
import { createPipeline } from './processing/pipeline.js';
import { queryApi } from './query/query-api.js';
import { Admission } from './receiver/admission.js';
import { otlpReceiver } from './receiver/otlp-receiver.js';
import { BearerToken } from './security/bearer.js';
import { readGuard } from './security/read-guard.js';
import { SqliteStore } from './store/sqlite-store.js';
import type { Store } from './store/store.js';

export type { CollectorOptions } from './config.js';

export interface RunningCollector {
  /** e.g. `http://127.0.0.1:4318` (the port actually bound, also when asked for port 0). */
  url: string;
  app: FastifyInstance;
  store: Store;
  config: ResolvedConfig;
  /** Drains in-flight exports, stops the server, folds what is pending and closes the database. Idempotent. */
  close(): Promise<void>;
}

interface AjvError {
  instancePath: string;
  message?: string;
  params?: { additionalProperty?: string; allowedValues?: unknown[] };
}

/** Validation errors that name the parameter, the unknown property, or the allowed values. */
function schemaErrorFormatter(errors: readonly AjvError[], dataVar: string): Error {
  const text = errors
    .map((error) => {
      const path = `${dataVar}${error.instancePath.replaceAll('/', '.')}`;
      const extra = error.params?.additionalProperty !== undefined
        ? `: ${error.params.additionalProperty}`
        : error.params?.allowedValues !== undefined
          ? ` (${error.params.allowedValues.join(', ')})`
          : '';
      return `${path} ${error.message ?? 'is invalid'}${extra}`;
    })
    .join('; ');
  return new Error(text);
}

/**
 * Builds and starts the collector: one fastify server with the OTLP receiver (`/v1/*`), the query API
 * (`/api/v1/*`), `/healthz`, `/readyz` and `/metrics`, over one SQLite store. Used by the CLI and, in process,
 * by tests (`port: 0`).
 */
export async function startCollector(options: CollectorOptions): Promise<RunningCollector> {
  const config = resolveConfig(options);
  const store = new SqliteStore({
    path: config.dbPath,
    clock: config.clock,
    retention: config.retention,
    synchronous: config.synchronous,
    maxExtensionIdsPerInstanceHour: config.limits.maxExtensionIdsPerInstanceHour,
    examplesPerCell: config.examplesPerCell,
  });
  const admission = new Admission(config.limits.maxInFlightExports);
  const metrics = new SelfMetrics(store, admission, config.clock, config.metricsWindowMs);
  const ingestToken = config.ingestToken === undefined ? undefined : new BearerToken(config.ingestToken);
  const readToken = config.readToken === undefined ? undefined : new BearerToken(config.readToken);

  const app = Fastify({
    logger: config.logger,
    // One line per export would drown everything else; refusals and errors are logged by the receiver.
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: 'idle',
    ajv: { customOptions: { removeAdditional: false, coerceTypes: true } },
    schemaErrorFormatter,
  });

  try {
    await app.register(otlpReceiver, {
      prefix: '/v1',
      consumer: createPipeline(store, config.limits, config.retention, config.clock),
      admission,
      limits: config.limits,
      ingestToken,
      telemetry: metrics,
    });
    await app.register(healthRoutes, { store, admission });
    await app.register(dashboardRoutes, {});
    await app.register(async (protectedScope) => {
      protectedScope.addHook('onRequest', readGuard(readToken));
      await protectedScope.register(queryApi, {
        prefix: '/api/v1',
        store,
        clock: config.clock,
        staleAfterMs: config.staleAfterMs,
        openEndMs: config.limits.maxFutureSkewMs,
      });
      await protectedScope.register(prometheusRoute, { metrics });
    });
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await app.close().catch(() => undefined);
    await store.close();
    throw error;
  }

  const log = app.log;
  const fold = setInterval(() => {
    store.flush().catch((error: unknown) => log.error({ err: error }, 'folding pending increments failed'));
  }, config.foldIntervalMs);
  const maintain = (): void => {
    store.maintain().catch((error: unknown) => log.error({ err: error }, 'retention failed'));
  };
  const maintenance = setInterval(maintain, config.maintenanceIntervalMs);
  fold.unref();
  maintenance.unref();
  maintain();

  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      clearInterval(fold);
      clearInterval(maintenance);
      // Exports already admitted finish (and are answered) before the server and the database close.
      const drained = await Promise.race([
        admission.drain().then(() => true),
        new Promise<boolean>((resolve) => setTimeout(resolve, config.shutdownGraceMs, false).unref()),
      ]);
      if (!drained) log.warn('shutdown: in-flight exports did not finish in time; closing anyway');
      const closed = app.close();
      const forced = setTimeout(() => app.server.closeAllConnections(), config.shutdownGraceMs);
      forced.unref();
      await closed;
      clearTimeout(forced);
      await store.close();
    })();
    return closing;
  };

  return { url, app, store, config, close };
}
