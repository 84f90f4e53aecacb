import type { DeliveryState } from '../../store/store.js';
import type { Alert, AlertTransition, EvaluationCycle, Notifier } from '../../model/alerts.js';
import { backoffDelay } from './backoff.js';
import { CLOSE_GRACE_MS, type DeliveryConfig } from './config.js';
import { postJson } from './http.js';
import { dashboardLink, notifiedAnnotations } from './dashboard-link.js';
import { type DeliveryDependencies, DeliveryLogBuffer } from './telemetry.js';

/** An alert as Alertmanager's API v2 takes it (`POST /api/v2/alerts`, `postableAlerts`). */
export interface PostableAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL: string;
}

/** A transition to firing or to resolved, not yet in a successful post. */
interface Unsent {
  transition: AlertTransition;
  attempts: number;
  queuedAtMs: number;
}

/** Alertmanager 0.25 accepts only Prometheus-style label names. */
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Names made valid (`extension.id` → `extension_id`), empty values left out (Alertmanager treats them as absent). */
export function labelSet(source: Record<string, string>): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === '') continue;
    const valid = LABEL_NAME.test(name) ? name : name.replace(/[^a-zA-Z0-9_]/g, '_').replace(/^(?=[0-9])/, '_') || '_';
    labels[valid] = value;
  }
  return labels;
}

/**
 * One Alertmanager (API v2). Alertmanager wants the whole picture again and again, as Prometheus sends it: every
 * firing alert is posted on each transition and at least every resend interval, with an `endsAt` a few intervals
 * ahead (if extscope stops, Alertmanager resolves them by itself); a resolved alert is posted with `endsAt` at its
 * resolution until one post succeeds. Pending alerts are not sent. Routing, grouping, silencing and
 * notification are Alertmanager's. Each transition that reaches Alertmanager (to firing, firing to resolved) has
 * a row in the delivery log.
 */
export class AlertmanagerNotifier implements Notifier {
  private readonly endpoint: string;
  private readonly record: DeliveryLogBuffer;
  private firing = new Map<string, Alert>();
  /** Resolved since the last successful post, by fingerprint. */
  private readonly resolved = new Map<string, Alert>();
  /** Transitions not yet in a successful post, with their attempts. */
  private readonly unsent = new Map<string, Unsent>();
  private lastSentAt = Number.NEGATIVE_INFINITY;
  private lastCycleAtMs: number | undefined;
  private cycleGapMs = 0;
  private sending: Promise<void> | undefined;
  private again = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private closed = false;
  /** Aborts a post still in flight once closing has waited for it. */
  private readonly cancel = new AbortController();

  constructor(
    readonly name: string,
    baseUrl: string,
    private readonly config: DeliveryConfig,
    private readonly deps: DeliveryDependencies,
  ) {
    this.endpoint = `${baseUrl.replace(/\/+$/, '')}/api/v2/alerts`;
    this.record = new DeliveryLogBuffer(deps);
  }

  deliver(cycle: EvaluationCycle): void {
    if (this.closed) return;
    if (this.lastCycleAtMs !== undefined) this.cycleGapMs = Math.max(0, cycle.atMs - this.lastCycleAtMs);
    this.lastCycleAtMs = cycle.atMs;
    this.firing = new Map(cycle.firing.filter((alert) => alert.state === 'firing').map((alert) => [alert.fingerprint, alert]));
    let changed = false;
    for (const transition of cycle.transitions) {
      const { alert } = transition;
      if (transition.to === 'resolved' && transition.from === 'firing') {
        this.firing.delete(alert.fingerprint);
        this.resolved.set(alert.fingerprint, alert);
      } else if (transition.to !== 'firing') continue;
      if (this.unsent.has(transition.id)) continue;
      const entry = { transition, attempts: 0, queuedAtMs: this.deps.clock() };
      this.unsent.set(transition.id, entry);
      this.log(entry, 'queued');
      changed = true;
    }
    this.bound();
    if (changed || performance.now() - this.lastSentAt >= this.config.alertmanagerResendMs) this.trigger();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (this.sending !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.sending, new Promise((resolve) => (timer = setTimeout(resolve, Math.min(CLOSE_GRACE_MS, this.config.requestTimeoutMs))))]);
      clearTimeout(timer);
    }
    this.cancel.abort();
    await this.sending;
    for (const entry of this.unsent.values()) this.log(entry, 'abandoned');
    this.unsent.clear();
    await this.record.flush();
  }

  /** Starts a post now, or after the one running; a retry waiting out its backoff takes the news with it. */
  private trigger(): void {
    if (this.closed || this.retryTimer !== undefined) return;
    if (this.sending !== undefined) {
      this.again = true;
      return;
    }
    this.sending = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.post())
      .catch((error: unknown) => this.deps.warn(`alertmanager ${this.name}: ${error instanceof Error ? error.message : String(error)}`))
      .finally(() => {
        this.sending = undefined;
        if (this.again) {
          this.again = false;
          this.trigger();
        }
      });
  }

  private async post(): Promise<void> {
    const now = this.deps.clock();
    // Alertmanager judges `endsAt` by its own clock: the wall clock, whatever clock evaluation runs on.
    const wallNow = Date.now();
    const resolved = [...this.resolved.values()];
    // An alert that fires again before its resolution got through waits for the next post: in one post
    // Alertmanager would merge the two into one alert that never ended.
    const firing = [...this.firing.values()].filter((alert) => !this.resolved.has(alert.fingerprint));
    const heldBack = new Set([...this.firing.keys()].filter((fingerprint) => this.resolved.has(fingerprint)));
    const alerts = [...firing.map((alert) => this.postable(alert, wallNow)), ...resolved.map((alert) => this.postable(alert, wallNow))];
    const included = [...this.unsent.entries()];
    if (alerts.length === 0) return;
    for (const [, entry] of included) entry.attempts++;
    const result = await postJson(this.endpoint, JSON.stringify(alerts), {}, this.config.requestTimeoutMs, this.cancel.signal);
    const telemetry = this.deps.telemetry;
    // Closing: what did not get through is marked abandoned by close().
    if (result.outcome !== 'delivered' && this.closed) return;
    if (result.outcome === 'delivered') {
      this.lastSentAt = performance.now();
      this.failures = 0;
      telemetry?.deliveryCounted(this.name, 'sent');
      for (const alert of resolved) if (this.resolved.get(alert.fingerprint) === alert) this.resolved.delete(alert.fingerprint);
      for (const [id, entry] of included) {
        if (entry.transition.to === 'firing' && heldBack.has(entry.transition.alert.fingerprint)) continue;
        this.unsent.delete(id);
        this.log(entry, 'delivered', result.status);
      }
      if (heldBack.size > 0) this.again = true;
      return;
    }
    this.failures++;
    if (result.outcome === 'retry' && this.failures < this.config.retry.maxAttempts) {
      telemetry?.deliveryCounted(this.name, 'retried');
      const delay = backoffDelay(this.config.retry, this.failures, result.retryAfterMs);
      for (const [, entry] of included) this.log(entry, 'retrying', result.status, result.error, now + delay);
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        this.trigger();
      }, delay).unref();
      return;
    }
    // Given up: what was firing is sent again at the next resend; what was resolved ends by itself at its `endsAt`.
    telemetry?.deliveryCounted(this.name, 'failed');
    this.deps.warn(`alertmanager ${this.name}: gave up posting ${alerts.length} alerts after ${this.failures} attempts (${result.error})`);
    this.failures = 0;
    for (const alert of resolved) this.resolved.delete(alert.fingerprint);
    for (const [id, entry] of included) {
      this.unsent.delete(id);
      this.log(entry, 'failed', result.status, result.error);
    }
  }

  private postable(alert: Alert, wallNowMs: number): PostableAlert {
    const startsAt = new Date(alert.firingSinceMs ?? alert.activeSinceMs).toISOString();
    // As Prometheus does: a firing alert ends a few sends ahead unless it is sent again; a resolved one ends at its
    // resolution, and at the latest now (an evaluation clock running ahead must not keep it open).
    const endsAtMs =
      alert.state === 'resolved'
        ? Math.min(alert.resolvedAtMs ?? wallNowMs, wallNowMs)
        : wallNowMs + 4 * Math.max(this.config.alertmanagerResendMs, this.cycleGapMs);
    return {
      labels: labelSet(alert.labels),
      annotations: labelSet(notifiedAnnotations(this.deps.publicUrl(), alert)),
      startsAt,
      endsAt: new Date(endsAtMs).toISOString(),
      generatorURL: dashboardLink(this.deps.publicUrl(), alert),
    };
  }

  /** A receiver down for long must not grow memory: the oldest resolved alerts and transitions go first (counted). */
  private bound(): void {
    const capacity = this.config.queueCapacity;
    for (const map of [this.resolved, this.unsent] as Map<string, unknown>[]) {
      while (map.size > capacity) {
        const [key, value] = map.entries().next().value as [string, unknown];
        map.delete(key);
        if (map !== this.unsent) continue;
        this.log(value as Unsent, 'dropped');
        this.deps.telemetry?.deliveryCounted(this.name, 'dropped');
      }
    }
  }

  private log({ transition, attempts, queuedAtMs }: Unsent, state: DeliveryState, lastStatus?: number, lastError?: string, nextAttemptAtMs?: number): void {
    this.record.write({
      receiver: this.name,
      transitionId: transition.id,
      fingerprint: transition.alert.fingerprint,
      rule: transition.alert.rule,
      from: transition.from,
      to: transition.to,
      state,
      attempts,
      lastStatus,
      lastError,
      nextAttemptAtMs,
      queuedAtMs,
      atMs: this.deps.clock(),
    });
  }
}
