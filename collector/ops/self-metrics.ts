import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Signal } from '../otlp/codec.js';
import type { MetricsOutcome, TracesOutcome } from '../processing/pipeline.js';
import { type MatrixView, buildMatrixView } from '../query/matrix-view.js';
import type { Admission } from '../receiver/admission.js';
import type { ExportResult, ReceiverTelemetry } from '../receiver/receiver-telemetry.js';
import type { Store } from '../store/store.js';

/** More label combinations than this on the matrix gauges are cut (and the cut is itself reported). */
const MAX_MATRIX_SERIES = 10_000;

/**
 * The collector's own metrics, in a registry of its own (nothing global): ingest health from the receiver,
 * database size, and the matrix of the last `windowMs` as gauges, computed when scraped.
 */
export class SelfMetrics implements ReceiverTelemetry {
  readonly registry = new Registry();
  private readonly exports: Counter<'signal' | 'result'>;
  private readonly refusals: Counter<'signal' | 'reason'>;
  private readonly points: Counter<'result'>;
  private readonly ignored: Counter<'reason'>;
  private readonly spans: Counter<'result'>;
  private readonly duration: Histogram<'signal'>;
  private readonly matrixRequests: Gauge<'client'>;
  private readonly matrixShare: Gauge<'client' | 'extension'>;
  private readonly matrixTruncated: Gauge;
  private readonly matrixSource: () => Promise<MatrixView>;

  constructor(store: Store, admission: Admission, clock: () => number, windowMs: number) {
    const registers = [this.registry];
    this.exports = new Counter({ name: 'extscope_collector_exports_total', help: 'OTLP exports received, by signal and result', labelNames: ['signal', 'result'], registers });
    this.refusals = new Counter({ name: 'extscope_collector_exports_refused_total', help: 'OTLP exports not accepted, by reason', labelNames: ['signal', 'reason'], registers });
    this.points = new Counter({
      name: 'extscope_collector_points_total',
      help: 'Counter data points: applied, duplicate (a retry, not counted again), rejected (partial success), ignored',
      labelNames: ['result'],
      registers,
    });
    this.ignored = new Counter({ name: 'extscope_collector_points_ignored_total', help: 'Data points not used, by reason', labelNames: ['reason'], registers });
    this.spans = new Counter({ name: 'extscope_collector_spans_total', help: 'Spans received: stored as examples, ignored, rejected', labelNames: ['result'], registers });
    this.duration = new Histogram({
      name: 'extscope_collector_export_duration_seconds',
      help: 'Time to receive, decode, validate and commit one export',
      labelNames: ['signal'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    new Gauge({
      name: 'extscope_collector_exports_in_flight',
      help: 'OTLP exports being received or processed',
      registers,
      collect() {
        this.set(admission.current);
      },
    });
    new Gauge({
      name: 'extscope_collector_database_size_bytes',
      help: 'Size of the database file and its write-ahead log',
      registers,
      async collect() {
        this.set(await store.sizeBytes());
      },
    });

    this.matrixRequests = new Gauge({
      name: 'extscope_matrix_requests',
      help: `MCP requests per client name over the last ${Math.round(windowMs / 60_000)} minutes`,
      labelNames: ['client'],
      registers,
    });
    this.matrixShare = new Gauge({
      name: 'extscope_matrix_negotiated_share',
      help: `Share of a client's requests in which the extension was negotiated, over the last ${Math.round(windowMs / 60_000)} minutes`,
      labelNames: ['client', 'extension'],
      registers,
    });
    this.matrixTruncated = new Gauge({ name: 'extscope_matrix_series_truncated', help: 'Matrix gauge series left out over the cap', registers });
    this.matrixSource = async () => {
      const now = clock();
      return buildMatrixView(await store.matrix({ fromMs: now - windowMs, toMs: now }), 'client');
    };
  }

  /**
   * Recomputes the matrix gauges; called before each scrape (prom-client collects metrics concurrently, so a
   * collect callback could not feed other gauges in time).
   */
  async refreshMatrix(): Promise<void> {
    const view = await this.matrixSource();
    this.matrixRequests.reset();
    this.matrixShare.reset();
    let series = 0;
    let left = 0;
    for (const row of view.rows) {
      if (series++ < MAX_MATRIX_SERIES) this.matrixRequests.set({ client: row.client }, row.requests);
      else left++;
      if (row.requests === 0) continue;
      for (const cell of row.extensions) {
        if (cell.clientDeclared === 0 && cell.serverAdvertised === 0) continue;
        if (series++ < MAX_MATRIX_SERIES) this.matrixShare.set({ client: row.client, extension: cell.id }, cell.negotiated / row.requests);
        else left++;
      }
    }
    this.matrixTruncated.set(left);
  }

  exportFinished(signal: Signal, result: ExportResult, seconds: number, reason?: string): void {
    this.exports.inc({ signal, result });
    if (reason !== undefined) this.refusals.inc({ signal, reason });
    if (result === 'accepted' || result === 'partial') this.duration.observe({ signal }, seconds);
  }

  metricsConsumed(outcome: MetricsOutcome): void {
    this.points.inc({ result: 'applied' }, outcome.applied);
    this.points.inc({ result: 'duplicate' }, outcome.duplicates);
    this.points.inc({ result: 'rejected' }, outcome.rejected);
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
}
