import { backoffDelay } from './backoff.js';
import type { RetryPolicy } from './config.js';
import type { AttemptResult } from './http.js';

/** Where a queued notification stands after each step (reported through `changed`). */
export type JobChange =
  | { state: 'queued' }
  | { state: 'delivered'; status: number }
  | { state: 'retrying'; status?: number | undefined; error: string; nextAttemptAtMs: number }
  | { state: 'failed'; status?: number | undefined; error: string }
  | { state: 'dropped' }
  | { state: 'abandoned' };

interface QueuedJob<T> {
  readonly key: string;
  readonly payload: T;
  /** Attempts made so far. */
  readonly attempts: number;
}

export interface RetryQueueOptions<T> {
  /** Jobs waiting (for a first attempt or a retry); a job pushed past it drops the oldest waiting one. */
  capacity: number;
  /** Attempts in flight at once. */
  concurrency: number;
  policy: RetryPolicy;
  /** Time as recorded (the next attempt's time); waits themselves are real timers. */
  now: () => number;
  /** One attempt. Must not throw. */
  send(payload: T, attempt: number): Promise<AttemptResult>;
  changed(job: QueuedJob<T>, change: JobChange): void;
}

interface Job<T> {
  seq: number;
  key: string;
  payload: T;
  attempts: number;
  /** False while waiting out a backoff. */
  ready: boolean;
  timer?: NodeJS.Timeout | undefined;
}

/**
 * A bounded in-memory queue of notifications with retries: each job is attempted until delivered, rejected,
 * or out of attempts, waiting an exponential backoff between attempts. `push` never waits and never throws;
 * when the queue is full the oldest waiting job is dropped (reported), so a receiver that is down costs a
 * bounded amount of memory and nothing else.
 */
export class RetryQueue<T> {
  /** Waiting jobs, oldest first (by push order, also while they wait for a retry). */
  private readonly waiting: Job<T>[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private seq = 0;
  private pumpScheduled = false;
  private closed = false;

  constructor(private readonly options: RetryQueueOptions<T>) {}

  get size(): number {
    return this.waiting.length + this.inFlight.size;
  }

  /** `attempts`: made before (a notification resumed after a restart goes on counting). */
  push(key: string, payload: T, attempts = 0): void {
    const job: Job<T> = { seq: this.seq++, key, payload, attempts, ready: true };
    if (this.closed) {
      this.report(job, { state: 'abandoned' });
      return;
    }
    while (this.waiting.length >= this.options.capacity) {
      const oldest = this.waiting.shift();
      if (oldest === undefined) break;
      clearTimeout(oldest.timer);
      this.report(oldest, { state: 'dropped' });
    }
    this.waiting.push(job);
    this.report(job, { state: 'queued' });
    this.schedulePump();
  }

  /**
   * Stops retrying (waiting jobs are reported abandoned) and waits up to `graceMs` for attempts in flight; then
   * `cancel` aborts those left, and their end is reported before this resolves.
   */
  async close(graceMs: number, cancel: () => void): Promise<void> {
    this.closed = true;
    for (const job of this.waiting.splice(0)) {
      clearTimeout(job.timer);
      this.report(job, { state: 'abandoned' });
    }
    if (this.inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.inFlight]), new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
    clearTimeout(timer);
    if (this.inFlight.size === 0) return;
    cancel();
    await Promise.allSettled([...this.inFlight]);
  }

  /** Attempts start on a later turn of the event loop: the caller (evaluation) never runs a send. */
  private schedulePump(): void {
    if (this.pumpScheduled || this.closed) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    }).unref();
  }

  private pump(): void {
    while (!this.closed && this.inFlight.size < this.options.concurrency) {
      const index = this.waiting.findIndex((job) => job.ready);
      if (index < 0) return;
      const [job] = this.waiting.splice(index, 1);
      if (job !== undefined) this.attempt(job);
    }
  }

  private attempt(job: Job<T>): void {
    job.attempts++;
    const running = this.options
      .send(job.payload, job.attempts)
      .catch((error: unknown): AttemptResult => ({ outcome: 'retry', error: error instanceof Error ? error.message : String(error) }))
      .then((result) => this.settle(job, result))
      .finally(() => {
        this.inFlight.delete(running);
        this.schedulePump();
      });
    this.inFlight.add(running);
  }

  private settle(job: Job<T>, result: AttemptResult): void {
    if (result.outcome === 'delivered') {
      this.report(job, { state: 'delivered', status: result.status });
      return;
    }
    if (result.outcome === 'reject' || job.attempts >= this.options.policy.maxAttempts) {
      this.report(job, { state: 'failed', status: result.status, error: result.error });
      return;
    }
    if (this.closed) {
      this.report(job, { state: 'abandoned' });
      return;
    }
    const delay = backoffDelay(this.options.policy, job.attempts, result.retryAfterMs);
    job.ready = false;
    job.timer = setTimeout(() => {
      job.ready = true;
      job.timer = undefined;
      this.schedulePump();
    }, delay).unref();
    // Back in its place by age, so that a full queue still drops the oldest notification first.
    const at = this.waiting.findIndex((other) => other.seq > job.seq);
    this.waiting.splice(at < 0 ? this.waiting.length : at, 0, job);
    this.report(job, { state: 'retrying', status: result.status, error: result.error, nextAttemptAtMs: this.options.now() + delay });
    // A retry could make the queue over-full: the oldest waiting job goes, as on push.
    while (this.waiting.length > this.options.capacity) {
      const oldest = this.waiting.shift();
      if (oldest === undefined) break;
      clearTimeout(oldest.timer);
      this.report(oldest, { state: 'dropped' });
    }
  }

  private report(job: Job<T>, change: JobChange): void {
    try {
      this.options.changed({ key: job.key, payload: job.payload, attempts: job.attempts }, change);
    } catch {
      // Reporting (the delivery log, counters) must not break the queue.
    }
  }
}
