import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { MetricsOutcome, TracesOutcome } from '../model/consumer.js';
import { rejectedCount } from '../model/rejections.js';
import type { Protocol, Signal } from '../otlp/codec.js';
import { FleetMetrics } from './fleet-metrics.js';
import { RejectionTally } from './rejections.js';
import { RequestCounters } from './request-counters.js';
import { registerReadCounts } from './read-counts.js';
import type { RollupReader, StoreLifecycle, StoreStats } from '../store/store.js';
import { COLLECTOR_VERSION } from '../version.js';

/** What ingest holds now: admission slots (receiver/otlp/admission.ts) and bodies arriving (receive-budget.ts). */
interface IngestLoad {
  /** Exports holding a slot: arrived in full, being decoded and stored. */
  inFlight: number;
  /** Slots there are: at the limit a new export is answered 503. */
  limit: number;
  /** Bodies (gRPC messages) arriving, which hold bytes but no slot. */
  receiving: number;
  receivingBytes: number;
}

export interface SelfMetricsSources {
  reader: Pick<RollupReader, 'instances'>;
  lifecycle: Pick<StoreLifecycle, 'sizeBytes' | 'stats'>;
  /** What ingest holds now. */
  ingest: () => IngestLoad;
  /** Extension-id points counted under `_OTHER` (over the per-instance-hour limit) since start. */
  idOverflow?: () => number;
  clock: () => number;
  /** Instances not heard from for this long are left out of `extscope_instance_advertises`. */
  staleAfterMs: number;
}

/**
 * The collector's own metrics, in a registry of its own (nothing global): ingest health as the receiver
 * reports it, the store's size and conversion state, the requests applied as counters (ops/request-counters.ts)
 * and what the live instances advertise (ops/fleet-metrics.ts).
 */
export class SelfMetrics {
  readonly registry = new Registry();
  /** Points refused one by one, by reason and service (also read by the query API). */
  readonly rejections: RejectionTally;
  private readonly exports: Counter<'signal' | 'result' | 'protocol'>;
  private readonly refusals: Counter<'signal' | 'reason' | 'protocol'>;
  private readonly points: Counter<'result'>;
  private readonly ignored: Counter<'reason'>;
  private readonly spans: Counter<'result'>;
  private readonly duration: Histogram<'signal'>;
  private readonly requests: RequestCounters;
  private readonly fleet: FleetMetrics;
  private readonly deliveries: Counter<'receiver' | 'result'>;
  private readonly maintenance: Histogram;
  private readonly warmUp: Histogram;

  constructor(private readonly sources: SelfMetricsSources) {
    const { reader, lifecycle, ingest, idOverflow, clock, staleAfterMs } = sources;
    const registers = [this.registry];
    // The store's stats, read once for the series a scrape draws from them (its metrics are collected together).
    let stats: Promise<StoreStats> | undefined;
    const storeStats = (): Promise<StoreStats> => (stats ??= lifecycle.stats().finally(() => (stats = undefined)));
    this.rejections = new RejectionTally(this.registry, sources.clock);
    // The process and Node.js runtime series every Node.js service exposes (process_*, nodejs_*), read when scraped.
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: 'extscope_build_info',
      help: "Always 1: the running collector's version and Node.js version as labels",
      labelNames: ['version', 'nodejs'],
      registers,
    }).set({ version: COLLECTOR_VERSION, nodejs: process.version }, 1);
    this.exports = new Counter({
      name: 'extscope_collector_exports_total',
      help: 'OTLP exports received, by signal, result and protocol (http, grpc)',
      labelNames: ['signal', 'result', 'protocol'],
      registers,
    });
    this.refusals = new Counter({
      name: 'extscope_collector_exports_refused_total',
      help: 'OTLP exports not accepted, by reason and protocol',
      labelNames: ['signal', 'reason', 'protocol'],
      registers,
    });
    this.points = new Counter({
      name: 'extscope_collector_points_total',
      help: 'Counter data points: applied, duplicate (a retry, not counted again), rejected (partial success), ignored',
      labelNames: ['result'],
      registers,
    });
    this.ignored = new Counter({ name: 'extscope_collector_points_ignored_total', help: 'Data points not used, by reason', labelNames: ['reason'], registers });
    this.spans = new Counter({
      name: 'extscope_collector_spans_total',
      help: 'Spans received: stored as examples, ignored, rejected',
      labelNames: ['result'],
      registers,
    });
    this.duration = new Histogram({
      name: 'extscope_collector_export_duration_seconds',
      help: 'Time to receive, decode, validate and commit one export',
      labelNames: ['signal'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    new Gauge({
      name: 'extscope_collector_exports_in_flight',
      help: 'OTLP exports holding an admission slot: arrived in full, being decoded and stored',
      registers,
      collect() {
        this.set(ingest().inFlight);
      },
    });
    new Gauge({
      name: 'extscope_collector_exports_limit',
      help: 'Admission slots (EXTSCOPE_MAX_IN_FLIGHT): with every one taken, ingest is saturated and a new export is answered 503',
      registers,
      collect() {
        this.set(ingest().limit);
      },
    });
    new Gauge({
      name: 'extscope_collector_ingest_saturated',
      help: '1 while every admission slot is taken (a new export is answered 503 and /readyz says not ready), else 0',
      registers,
      collect() {
        const { inFlight: taken, limit } = ingest();
        this.set(taken >= limit ? 1 : 0);
      },
    });
    new Gauge({
      name: 'extscope_collector_exports_receiving',
      help: 'OTLP exports whose body (gRPC: message and half-close) is still arriving; they hold no admission slot',
      registers,
      collect() {
        this.set(ingest().receiving);
      },
    });
    new Gauge({
      name: 'extscope_collector_receiving_bytes',
      help: 'Bytes of export bodies still arriving (bounded by EXTSCOPE_MAX_RECEIVING_BYTES, a fair share per address)',
      registers,
      collect() {
        this.set(ingest().receivingBytes);
      },
    });
    new Gauge({
      name: 'extscope_collector_database_size_bytes',
      help: 'Size of the database file and its write-ahead log',
      registers,
      async collect() {
        this.set(await lifecycle.sizeBytes());
      },
    });
    new Gauge({
      name: 'extscope_collector_cumulative_streams',
      help: 'Cumulative streams (per sender start time) whose last total is kept to turn the next one into an increment',
      registers,
      async collect() {
        this.set((await storeStats()).cumulativeStreams);
      },
    });
    registerReadCounts(this.registry, [
      {
        name: 'extscope_collector_quarantined_points',
        help: 'Logged increments left out of the rollups because they are not counts ingest accepts (see the log), kept in the database',
        read: async () => (await storeStats()).quarantinedPoints,
      },
      {
        name: 'extscope_collector_fold_failures',
        help: 'Folds of pending increments that failed since start (reads then answer from what is stored)',
        read: async () => (await storeStats()).foldFailures,
      },
      {
        name: 'extscope_collector_extension_id_overflow',
        help: 'Extension-request points counted under the id _OTHER since start: their instance reported more distinct ids in the hour than allowed',
        read: () => idOverflow?.() ?? 0,
      },
      {
        name: 'extscope_collector_dimension_overflow',
        help: 'New values of sender-controlled dimensions (client names, versions, methods, …) stored as _OTHER since start, over the per-dimension limit',
        read: async () => (await storeStats()).overflowedValues,
      },
      {
        name: 'extscope_collector_instance_overflow',
        help: 'New instances stored under _OTHER since start: over the limit of service names or of instances kept',
        read: async () => (await storeStats()).overflowedInstances,
      },
    ]);

    this.requests = new RequestCounters(this.registry);
    this.fleet = new FleetMetrics({ reader, clock, staleAfterMs });
    this.deliveries = new Counter({
      name: 'extscope_alert_deliveries_total',
      help: 'Alert notifications by receiver and result: sent, failed (given up), retried (per retry), dropped (queue full)',
      labelNames: ['receiver', 'result'],
      registers,
    });
    this.maintenance = new Histogram({
      name: 'extscope_collector_maintenance_duration_seconds',
      help: 'Time one retention pass on this collector took (every minute; dropping old buckets, hourly and at start, walks every series and cell)',
      buckets: [0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
      registers,
    });
    this.warmUp = new Histogram({
      name: 'extscope_collector_warm_up_duration_seconds',
      help: 'Time the read of the last 7 days made once the retention pass at start is over took (its closed part is then kept for the first page opened)',
      buckets: [0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
      registers,
    });
  }

  /**
   * The whole exposition of a scrape: the registry's metrics once every count applied so far is on the counters,
   * then the fleet gauge, which is computed off the scrape and shared (ops/fleet-metrics.ts).
   */
  async exposition(): Promise<Buffer> {
    const [fleet] = await Promise.all([this.fleet.exposition(), this.requests.settled()]);
    return Buffer.concat([Buffer.from(`${await this.registry.metrics()}\n`), fleet]);
  }

  /** The receiver's report of one export (see the receiver's telemetry interface). */
  exportFinished(protocol: Protocol, signal: Signal, result: string, seconds: number, reason?: string): void {
    this.exports.inc({ signal, result, protocol });
    if (reason !== undefined) this.refusals.inc({ signal, reason, protocol });
    if (result === 'accepted' || result === 'partial') this.duration.observe({ signal }, seconds);
  }

  metricsConsumed(outcome: MetricsOutcome): void {
    this.fleet.dataChanged();
    this.requests.applied(outcome.counts);
    this.points.inc({ result: 'applied' }, outcome.applied);
    this.points.inc({ result: 'duplicate' }, outcome.duplicates);
    this.points.inc({ result: 'rejected' }, rejectedCount(outcome.rejections));
    this.rejections.record(outcome.rejections);
    let ignored = 0;
    for (const [reason, count] of outcome.ignored) {
      this.ignored.inc({ reason }, count);
      ignored += count;
    }
    this.points.inc({ result: 'ignored' }, ignored);
  }

  tracesConsumed(outcome: TracesOutcome): void {
    this.spans.inc({ result: 'stored' }, outcome.stored);
    this.spans.inc({ result: 'ignored' }, outcome.ignored);
    this.spans.inc({ result: 'rejected' }, outcome.rejected);
  }

  /** A retention pass this collector ran (with several replicas, the one holding the job). */
  maintenanceFinished(seconds: number): void {
    this.maintenance.observe(seconds);
  }

  /** The warm-up read at start finished (warm-up.ts). */
  warmUpFinished(seconds: number): void {
    this.warmUp.observe(seconds);
  }

  /** Delivery's report (see collector/alerting/delivery/telemetry.ts); receiver names come from configuration, not from senders. */
  deliveryCounted(receiver: string, result: 'sent' | 'failed' | 'retried' | 'dropped'): void {
    this.deliveries.inc({ receiver, result });
  }
}
