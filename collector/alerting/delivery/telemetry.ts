import type { DeliveryEntry, DeliveryLogStore } from '../../store/store.js';

/** What delivery counts, per receiver: `retried` once per retry scheduled, the others once per notification. */
type DeliveryResult = 'sent' | 'failed' | 'retried' | 'dropped';

/** Counters on /metrics (the collector's SelfMetrics implements it). */
interface DeliveryTelemetry {
  deliveryCounted(receiver: string, result: DeliveryResult): void;
}

export interface DeliveryDependencies {
  /** The delivery log; written in batches after the steps, never waited on by a send. */
  log: Pick<DeliveryLogStore, 'recordDeliveries'> & Partial<Pick<DeliveryLogStore, 'unfinishedDeliveries'>>;
  telemetry?: DeliveryTelemetry | undefined;
  /** Base URL the dashboard links start with, asked at send time (the collector's own address is known only once it listens). */
  publicUrl: () => string;
  /** The clock: times in the delivery log, `endsAt` and alert times. */
  clock: () => number;
  /** Problems that do not stop delivery (the log could not be written, a receiver rejected a message). */
  warn: (message: string) => void;
}

/** How long log entries are collected before they are written together. */
const LOG_FLUSH_MS = 100;

/**
 * The delivery log's writer: entries are collected for {@link LOG_FLUSH_MS} and written together, the last state
 * of each notification only, in one transaction. A notification makes several steps (queued, then delivered; or
 * queued, dropped, one per retry); one write each would cost the event loop, and so ingest, more than the
 * sending does. A failure (disk full) is reported once per run of failures, never thrown.
 */
export class DeliveryLogBuffer {
  private pending = new Map<string, DeliveryEntry>();
  private timer: NodeJS.Timeout | undefined;
  private failing = false;
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly deps: Pick<DeliveryDependencies, 'log' | 'warn'>) {}

  write(entry: DeliveryEntry): void {
    this.pending.set(`${entry.receiver}\u0000${entry.transitionId}`, entry);
    this.timer ??= setTimeout(() => void this.flush(), LOG_FLUSH_MS).unref();
  }

  /** Writes what is pending now (also at close, so the last states are not lost). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const entries = [...this.pending.values()];
    this.pending = new Map();
    if (entries.length === 0) return this.writing;
    this.writing = this.writing.then(() =>
      this.deps.log.recordDeliveries(entries).then(
        () => void (this.failing = false),
        (error: unknown) => {
          if (!this.failing)
            this.deps.warn(`alert delivery log: cannot write (${error instanceof Error ? error.message : String(error)}); notifications are still sent`);
          this.failing = true;
        },
      ),
    );
    return this.writing;
  }
}
