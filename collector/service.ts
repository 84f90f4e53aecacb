import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildNotifiers } from './alerting/delivery/index.js';
import { AlertEngine, initialRules } from './alerting/engine.js';
import type { Notifier } from './model/alerts.js';
import { refuseOwnAddress } from './alerting/delivery/own-address.js';
import { type CollectorOptions, DEFAULT_DB_PATH, type ResolvedConfig, isLoopbackHost, resolveConfig } from './config.js';
import { adminRoutes } from './http/admin/index.js';
import { apiV1 } from './http/api/v1/index.js';
import { createApp, readScope } from './http/app.js';
import { hostPolicy } from './http/host-allow-list.js';
import { windDown } from './http/wind-down.js';
import { deliveriesRoutes } from './http/api/v1/deliveries/route.js';
import { dashboardRoutes } from './http/dashboard.js';
import { HeavyReads, scanBoundedReader, chunkedAnswer, heavyReadGuard } from './http/read-budget.js';
import { BearerToken } from './http/auth/bearer.js';
import { AuthFailureLimit } from './http/auth/failure-limit.js';
import type { MetricsBatch, SpanBatch } from './model/batches.js';
import type { Component } from './model/component.js';
import type { MetricsConsumer, TracesConsumer } from './model/consumer.js';
import { MAX_COUNT_PER_STREAM_MINUTE } from './model/records.js';
import { MS_PER_HOUR } from './model/time.js';
import { AlertMetrics } from './ops/alert-metrics.js';
import { healthRoutes } from './ops/health.js';
import { prometheusRoute } from './ops/prometheus.js';
import { SelfMetrics } from './ops/self-metrics.js';
import { ExtensionIdLimit } from './processor/extension-id-limit/index.js';
import { NormaliseMetrics } from './processor/normalise-metrics/index.js';
import { NormaliseSpans } from './processor/normalise-spans/index.js';
import { Admission } from './receiver/otlp/admission.js';
import { DecompressionBudget } from './receiver/otlp/body.js';
import { DecodePool } from './receiver/otlp/decode-pool.js';
import { RECEIVE_STALL_MS, ReceiveBudget } from './receiver/otlp/receive-budget.js';
import { otlpReceiver } from './receiver/otlp/plugin.js';
import { OtlpGrpcReceiver } from './receiver/otlp-grpc/receiver.js';
import { openStore } from './store/open.js';
import type { IngestStore, StoreRoles } from './store/store.js';
import { warmUp } from './warm-up.js';

export interface RunningCollector {
  /** e.g. `http://127.0.0.1:4318` (the port actually bound, also when asked for port 0). */
  url: string;
  /** e.g. `127.0.0.1:4317`, the OTLP/gRPC receiver's address (the port actually bound); undefined when it is off. */
  grpcAddress: string | undefined;
  app: FastifyInstance;
  /** The store's roles (ingest, reader, id limits, alerts, deliveries, lifecycle, backup). */
  store: StoreRoles;
  config: ResolvedConfig;
  /** Alert delivery (webhooks, Alertmanager): the rule engine hands it each evaluation cycle. */
  notifier: Notifier;
  /** The alert rule engine: `evaluate()` runs a cycle now, `reload()` re-reads the rules file (SIGHUP). */
  alerting: AlertEngine;
  /** Drains in-flight exports, stops the server and the background jobs, folds what is pending and closes the database. Idempotent. */
  close(): Promise<void>;
}

/** The end of both pipelines: the store, as a consumer. */
function storeConsumer(store: IngestStore): MetricsConsumer<MetricsBatch> & TracesConsumer<SpanBatch> {
  return {
    async consumeMetrics(batch) {
      const { applied, duplicates, rejections = [], counts } = await store.applyMetrics(batch);
      const rejectedReason =
        rejections.length > 0
          ? `cumulative points whose increment is beyond ${MAX_COUNT_PER_STREAM_MINUTE} were taken as a new baseline and not counted`
          : undefined;
      return { applied, duplicates, ignored: new Map(), rejections, rejectedReason, counts };
    },
    async consumeTraces(batch) {
      return { stored: await store.applySpans(batch), ignored: 0, rejected: 0, rejectedReason: undefined };
    },
  };
}

/** Runs `job` every `intervalMs` (and once at start, if asked) until shutdown; a failing run is logged, not fatal. */
function backgroundJob(name: string, intervalMs: number, runAtStart: boolean, job: () => Promise<void>, log: FastifyInstance['log']): Component {
  let timer: NodeJS.Timeout | undefined;
  const run = (): void => {
    job().catch((error: unknown) => log.error({ err: error }, `${name} failed`));
  };
  return {
    async start() {
      timer ??= setInterval(run, intervalMs).unref();
      if (runAtStart) run();
    },
    async shutdown() {
      clearInterval(timer);
    },
  };
}

/** Shuts the components down in reverse order, each once, whatever happens to the others. */
function lifecycle(components: Component[]): { start(): Promise<void>; shutdown(): Promise<void> } {
  const started: Component[] = [];
  let stopping: Promise<void> | undefined;
  return {
    async start() {
      for (const component of components) {
        started.push(component);
        await component.start();
      }
    },
    shutdown() {
      stopping ??= (async () => {
        let failure: unknown;
        for (const component of started.reverse()) await component.shutdown().catch((error: unknown) => (failure ??= error));
        if (failure !== undefined) throw failure;
      })();
      return stopping;
    },
  };
}

/**
 * Builds and starts the collector: the store; the pipelines (OTLP receivers → normalise → distinct-id limit →
 * store, and receivers → normalise spans → store); one fastify server with the OTLP/HTTP receiver (`/v1/*`), the
 * query API (`/api/v1/*`), `/healthz`, `/readyz` and `/metrics`; the OTLP/gRPC receiver on its own port (unless
 * off), sharing the HTTP receiver's gate and pipeline; and retention (the store folds on its own schedule). Used by the CLI
 * and, in process, by tests (`port: 0`).
 */
export async function startCollector(options: CollectorOptions): Promise<RunningCollector> {
  const config = resolveConfig(options);
  const { limits, clock } = config;
  // Before anything is opened: an invalid rules file stops the start with every error and its line.
  const rules = await initialRules(config.rulesPath);
  // The store is built before the server (whose logger it reports to); warnings before that go to stderr.
  let warn = (message: string): void => void process.stderr.write(`${message}\n`);
  const store = await openStore({
    db: config.dbPath,
    // Only the default location's directory (./data) is made; a --db naming a missing directory is refused.
    createDirectory: config.dbPath === DEFAULT_DB_PATH,
    clock,
    // Sessions that ended longer ago than they are listed for are folded into their build's row.
    retention: { ...config.retention, endedSessionsMs: config.endedTtlMs },
    synchronous: config.synchronous,
    examplesPerCell: config.examplesPerCell,
    minFreeBytes: config.minFreeBytes,
    maxValuesPerDimension: limits.maxValuesPerDimension,
    maxInstances: limits.maxInstances,
    foldIntervalMs: config.foldIntervalMs,
    timeouts: { statementTimeoutMs: limits.pgStatementTimeoutMs, lockTimeoutMs: limits.pgLockTimeoutMs },
    warn: (message) => warn(message),
  });

  const end = storeConsumer(store.ingest);
  const idLimit = new ExtensionIdLimit({ maxIdsPerInstanceHour: limits.maxExtensionIdsPerInstanceHour }, end, store.idLimits);
  const metrics = new NormaliseMetrics(
    { maxAttributeLength: limits.maxAttributeLength, maxFutureSkewMs: limits.maxFutureSkewMs, dedupWindowMs: config.retention.dedupHours * MS_PER_HOUR, clock },
    idLimit,
  );
  const traces = new NormaliseSpans(
    { maxAttributeLength: limits.maxAttributeLength, maxFutureSkewMs: limits.maxFutureSkewMs, maxSpansPerExport: limits.maxSpansPerExport, clock },
    end,
  );
  const admission = new Admission(limits.maxInFlightExports);
  const selfMetrics = new SelfMetrics({
    reader: store.reader,
    lifecycle: store.lifecycle,
    ingest: () => ({ inFlight: admission.current, limit: admission.limit, receiving: admission.receiving, receivingBytes: receiving.inUse }),
    idOverflow: () => idLimit.overflowed,
    clock,
    staleAfterMs: config.staleAfterMs,
  });
  const ingestToken = config.ingestToken === undefined ? undefined : new BearerToken(config.ingestToken);
  const readToken = config.readToken === undefined ? undefined : new BearerToken(config.readToken);
  const adminToken = config.adminToken === undefined ? undefined : new BearerToken(config.adminToken);
  const authFailures =
    ingestToken === undefined && readToken === undefined && adminToken === undefined
      ? undefined
      : new AuthFailureLimit({ maxFailures: limits.maxAuthFailuresPerMinute, windowMs: 60_000, maxAddresses: 10_000, clock });
  const decoder = new DecodePool();
  // Known once the server listens; links in notifications use it unless a public URL is configured.
  let ownUrl = '';
  const notifier = buildNotifiers(config.delivery, {
    log: store.deliveries,
    telemetry: selfMetrics,
    clock,
    publicUrl: () => config.delivery.publicUrl ?? ownUrl,
    warn: (message) => warn(message),
  });
  const decompression = new DecompressionBudget(limits.maxDecompressingBytes);
  const receiving = new ReceiveBudget(limits.maxReceivingBytes, RECEIVE_STALL_MS);
  const heavyReads = new HeavyReads(limits.maxHeavyReads);

  const app = createApp({
    logger: config.logger,
    receiveTimeoutMs: limits.receiveTimeoutMs,
    hosts: hostPolicy(isLoopbackHost(config.host), config.allowedHosts),
  });
  const stopping = windDown(app);
  const log = app.log;
  warn = (message) => log.warn(message);
  const grpc =
    config.grpcPort === null
      ? undefined
      : new OtlpGrpcReceiver({
          host: config.host,
          port: config.grpcPort,
          pipeline: { metrics, traces, decoder, telemetry: selfMetrics },
          gate: { ingestToken, authFailures, admission },
          limits: { maxMessageBytes: limits.maxBodyBytes, receiveTimeoutMs: limits.receiveTimeoutMs },
          decompression,
          receiving,
          log,
          shutdownGraceMs: config.shutdownGraceMs,
        });
  // Delivery channels (webhooks, Alertmanager) each take every evaluation cycle; the engine closes them.
  const notifiers: Notifier[] = [notifier];
  const alerting = new AlertEngine({
    rules,
    rulesPath: config.rulesPath,
    source: store.reader,
    states: store.alerts,
    clock,
    staleAfterMs: config.staleAfterMs,
    instanceTtlMs: config.instanceTtlMs,
    notifiers,
    observer: new AlertMetrics(selfMetrics.registry),
    log,
    intervalMs: config.alertIntervalMs,
    // With several replicas on one database, one of them evaluates and notifies; another takes over when it stops.
    exclusive: (work) => store.lifecycle.leadership().runExclusive('alerts', work),
  });
  // Once the retention pass at start is over (whether this replica ran it or another one holds the job), the last 7
  // days are read once, so that the first page opened finds that range's closed part kept (warm-up.ts).
  const warming = new AbortController();
  let warmUpStarted = false;
  const startWarmUp = (): void => {
    if (warmUpStarted) return;
    warmUpStarted = true;
    const failed = (error: unknown): void => log.warn({ err: error }, 'warm-up: reading the last 7 days failed; the first read of that range sums it itself');
    void warmUp(store.reader, clock, warming.signal, failed).then((seconds) => seconds !== undefined && selfMetrics.warmUpFinished(seconds));
  };
  // Shut down in reverse: the server stops taking exports (and drains) first, the store closes last.
  const components = lifecycle([
    { start: async () => undefined, shutdown: () => store.lifecycle.close() },
    { start: async () => undefined, shutdown: () => decoder.close() },
    { start: async () => undefined, shutdown: () => notifier.close() },
    // With several replicas on one database, each job runs on whichever one holds it (see StoreLifecycle.leadership).
    backgroundJob(
      'retention',
      config.maintenanceIntervalMs,
      true,
      () =>
        store.lifecycle
          .leadership()
          .runExclusive('retention', async () => {
            const started = performance.now();
            await store.lifecycle.maintain();
            selfMetrics.maintenanceFinished((performance.now() - started) / 1000);
          })
          .then(() => undefined)
          .finally(startWarmUp),
      log,
    ),
    // Stops the warm-up's read at its next chunk, before the store closes.
    { start: async () => undefined, shutdown: async () => warming.abort() },
    alerting,
    {
      async start() {
        await app.register(otlpReceiver, {
          prefix: '/v1',
          metrics,
          traces,
          admission,
          limits,
          ingestToken,
          telemetry: selfMetrics,
          decoder,
          decompression,
          receiving,
          authFailures,
        });
        await app.register(healthRoutes, {
          store: store.lifecycle,
          draining: () => admission.isDraining,
          grpcPort: () => grpc?.port ?? null,
          exports: () => ({ inFlight: admission.current, limit: limits.maxInFlightExports }),
        });
        await app.register(dashboardRoutes, {});
        await app.register(adminRoutes, {
          prefix: '/admin',
          token: adminToken,
          otherTokens: ingestToken !== undefined || readToken !== undefined,
          failures: authFailures,
          backup: store.backup,
          idleMs: limits.backupIdleMs,
          deadlineMs: limits.backupDeadlineMs,
        });
        await app.register(
          readScope(
            readToken,
            async (scope) => {
              scope.addHook('preHandler', heavyReadGuard(limits, heavyReads));
              scope.addHook('preSerialization', chunkedAnswer);
              await scope.register(apiV1, {
                prefix: '/api/v1',
                reader: scanBoundedReader(store.reader, limits.maxScannedCells),
                clock,
                staleAfterMs: config.staleAfterMs,
                instanceTtlMs: config.instanceTtlMs,
                endedTtlMs: config.endedTtlMs,
                alerts: { states: store.alerts, status: () => alerting.status() },
                rejections: selfMetrics.rejections,
                traceUrl: config.traceUrl,
              });
              await scope.register(deliveriesRoutes, { prefix: '/api/v1', deliveries: store.deliveries });
              await scope.register(prometheusRoute, { metrics: selfMetrics });
            },
            authFailures,
          ),
        );
        await app.listen({ host: config.host, port: config.port });
        // With port 0 the collector's own address is known only now (resolveConfig checked a configured port).
        if (config.port === 0) refuseOwnAddress(config.delivery, config.host, (app.server.address() as AddressInfo).port);
      },
      async shutdown() {
        // No new connection; every answer from now on closes its connection. Exports already begun (arriving or
        // admitted) finish and are answered, and so is every other request in progress, before the server and the
        // database close; then only connections that carried nothing since are closed.
        // One grace period for all of it.
        const graceEnd = performance.now() + config.shutdownGraceMs;
        const left = (): number => Math.max(0, graceEnd - performance.now());
        stopping.begin();
        const drained = await Promise.race([admission.drain().then(() => true), new Promise<boolean>((resolve) => setTimeout(resolve, left(), false).unref())]);
        if (!drained) log.warn('shutdown: in-flight exports did not finish in time; closing anyway');
        else if (!(await stopping.settled(left()))) log.warn('shutdown: requests in progress did not finish in time; closing anyway');
        const forced = setTimeout(() => app.server.closeAllConnections(), left()).unref();
        await app.close();
        clearTimeout(forced);
      },
    },
    // Started after the HTTP server, stopped before it: no gRPC export arrives once admission drains.
    ...(grpc === undefined ? [] : [grpc]),
  ]);

  try {
    await components.start();
  } catch (error) {
    await components.shutdown().catch(() => undefined);
    // A start that failed (a port in use) leaves no new, empty database behind.
    await store.lifecycle.discard().catch(() => undefined);
    throw error;
  }

  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  ownUrl = `http://${host}:${address.port}`;
  const grpcAddress = grpc?.port === undefined ? undefined : `${host}:${grpc.port}`;
  return { url: ownUrl, grpcAddress, app, store, config, notifier, alerting, close: () => components.shutdown() };
}
