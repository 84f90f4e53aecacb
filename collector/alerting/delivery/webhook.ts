import type { DeliveryState } from '../../store/store.js';
import type { AlertTransition, EvaluationCycle, Notifier } from '../../model/alerts.js';
import { CLOSE_GRACE_MS, type DeliveryConfig, type WebhookConfig } from './config.js';
import { postJson } from './http.js';
import { type JobChange, RetryQueue } from './retry-queue.js';
import { IDEMPOTENCY_HEADER, signedHeaders } from './signature.js';
import { type DeliveryDependencies, DeliveryLogBuffer } from './telemetry.js';
import { webhookBody } from './webhook-body.js';

/** Which notification a message is (the delivery log's columns), whether built now or resumed from the log. */
interface MessageKey {
  id: string;
  fingerprint: string;
  rule: string;
  from: string;
  to: string;
}

interface Message {
  key: MessageKey;
  /** Serialised once (and stored while unfinished): every attempt, also after a restart, sends the same bytes. */
  body: string;
  queuedAtMs: number;
}

const keyOf = (transition: AlertTransition): MessageKey => ({
  id: transition.id,
  fingerprint: transition.alert.fingerprint,
  rule: transition.alert.rule,
  from: transition.from,
  to: transition.to,
});

const LOGGED_STATE: Record<JobChange['state'], DeliveryState> = {
  queued: 'queued',
  delivered: 'delivered',
  retrying: 'retrying',
  failed: 'failed',
  dropped: 'dropped',
  abandoned: 'abandoned',
};

/**
 * A webhook receiver: one signed POST per transition, retried with backoff through a bounded queue, each step
 * in the delivery log under the transition id.
 */
export class WebhookNotifier implements Notifier {
  private readonly queue: RetryQueue<Message>;
  /** Transition ids already taken: a cycle handed over twice does not send twice. */
  private readonly seen = new Set<string>();
  private readonly log: DeliveryLogBuffer;
  private dropping = false;
  /**
   * The delivery log may hold unfinished notifications the last read had no room for: a queue full (1,000
   * waiting) plus the attempts in flight (2) is more than one read of `queueCapacity` rows, so after a kill -9 the
   * rest stayed `queued` for ever. They are read once the queue has room again.
   */
  private moreUnfinished = false;
  private resuming: Promise<void> | undefined;
  /** Aborts requests still in flight once closing has waited for them. */
  private readonly cancel = new AbortController();

  constructor(
    readonly name: string,
    private readonly webhook: WebhookConfig,
    private readonly config: DeliveryConfig,
    private readonly deps: DeliveryDependencies,
  ) {
    this.log = new DeliveryLogBuffer(deps);
    this.queue = new RetryQueue<Message>({
      capacity: config.queueCapacity,
      concurrency: config.concurrency,
      policy: config.retry,
      now: deps.clock,
      send: (message) =>
        postJson(
          webhook.url,
          message.body,
          { ...signedHeaders(webhook.secret, message.body, Date.now()), [IDEMPOTENCY_HEADER]: message.key.id },
          config.requestTimeoutMs,
          this.cancel.signal,
        ),
      changed: (job, change) => {
        const { key, body } = job.payload;
        this.log.write({
          receiver: name,
          transitionId: key.id,
          fingerprint: key.fingerprint,
          rule: key.rule,
          from: key.from,
          to: key.to,
          state: LOGGED_STATE[change.state],
          attempts: job.attempts,
          lastStatus: 'status' in change ? change.status : undefined,
          lastError: 'error' in change ? change.error : undefined,
          nextAttemptAtMs: change.state === 'retrying' ? change.nextAttemptAtMs : undefined,
          queuedAtMs: job.payload.queuedAtMs,
          atMs: deps.clock(),
          // The store keeps it while the notification is unfinished, and drops it once it is not.
          body,
        });
        this.count(change, key.id);
        if (this.moreUnfinished && change.state !== 'queued' && change.state !== 'retrying' && this.queue.size <= config.queueCapacity / 2) {
          setImmediate(() => void this.resume()).unref();
        }
      },
    });
  }

  deliver(cycle: EvaluationCycle): void {
    for (const transition of cycle.transitions) {
      if (this.seen.has(transition.id)) continue;
      this.remember(transition.id);
      const body = JSON.stringify(webhookBody(transition, this.deps.publicUrl()));
      this.queue.push(transition.id, { key: keyOf(transition), body, queuedAtMs: this.deps.clock() });
    }
  }

  /**
   * Queues again what the delivery log holds unfinished for this receiver: notifications a collector that
   * stopped (or died) had queued, was retrying or abandoned at its shutdown. The same body and idempotency key;
   * the attempts made count towards the limit. At most what the queue has room for: the rest once it has drained
   * to half (see {@link moreUnfinished}).
   */
  resume(): Promise<void> {
    this.resuming ??= this.resumeOnce().finally(() => (this.resuming = undefined));
    return this.resuming;
  }

  private async resumeOnce(): Promise<void> {
    const read = this.deps.log.unfinishedDeliveries;
    if (read === undefined) return;
    this.moreUnfinished = false;
    const limit = this.config.queueCapacity;
    let unfinished;
    try {
      unfinished = await read.call(this.deps.log, this.name, limit);
    } catch (error) {
      this.deps.warn(
        `webhook ${this.name}: cannot read the unfinished notifications to resume them (${error instanceof Error ? error.message : String(error)})`,
      );
      return;
    }
    // A full read may leave more behind it (oldest first: those queued here already come first, and are skipped).
    this.moreUnfinished = unfinished.length >= limit;
    const room = limit - this.queue.size;
    let resumed = 0;
    for (const { record, body } of unfinished) {
      // Queued here already (this collector's own, or resumed before).
      if (this.seen.has(record.transitionId)) continue;
      if (resumed >= room) {
        this.moreUnfinished = true;
        break;
      }
      this.remember(record.transitionId);
      const key = { id: record.transitionId, fingerprint: record.fingerprint, rule: record.rule, from: record.from, to: record.to };
      this.queue.push(record.transitionId, { key, body, queuedAtMs: record.createdAtMs }, record.attempts);
      resumed++;
    }
    if (resumed > 0) this.deps.warn(`webhook ${this.name}: resuming ${resumed} unfinished notifications from the delivery log`);
  }

  async close(): Promise<void> {
    await this.queue.close(Math.min(CLOSE_GRACE_MS, this.config.requestTimeoutMs), () => this.cancel.abort());
    await this.log.flush();
  }

  private count(change: JobChange, id: string): void {
    const telemetry = this.deps.telemetry;
    if (change.state === 'delivered') {
      telemetry?.deliveryCounted(this.name, 'sent');
      this.dropping = false;
    } else if (change.state === 'retrying') telemetry?.deliveryCounted(this.name, 'retried');
    else if (change.state === 'dropped') {
      telemetry?.deliveryCounted(this.name, 'dropped');
      // Once per run of drops: a receiver down for long drops one notification per new one.
      if (!this.dropping) this.deps.warn(`webhook ${this.name}: queue full, dropping the oldest notifications (first: ${id}); see the delivery log`);
      this.dropping = true;
    } else if (change.state === 'failed') {
      telemetry?.deliveryCounted(this.name, 'failed');
      this.deps.warn(`webhook ${this.name}: gave up on ${id} after ${change.error}`);
    }
  }

  /** Bounded: ids older than a few queues' worth are forgotten (the engine never repeats an old transition). */
  private remember(id: string): void {
    this.seen.add(id);
    if (this.seen.size > this.config.queueCapacity * 4) {
      const oldest = this.seen.values().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
  }
}
