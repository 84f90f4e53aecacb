/**
 * The alert lifecycle, pure: given the alerts active before a cycle and what the cycle observed, the alerts
 * after it and the transitions between. pending → firing once the condition held for the rule's `for`;
 * pending or firing → resolved once it no longer holds. An alert whose rule could not be evaluated this cycle
 * stays as it was: a failed read is not a resolution.
 */
import { createHash } from 'node:crypto';
import type { Alert, AlertState, AlertTransition } from '../model/alerts.js';
import type { Rule } from './rules/rule.js';

export interface Observation {
  rule: Rule;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  dashboardPath: string;
}

export interface StepResult {
  /** Pending or firing after the cycle, by fingerprint. */
  active: Map<string, Alert>;
  /** Alerts whose stored form changed (new, new state, new annotations), resolved ones included. */
  changed: Alert[];
  transitions: AlertTransition[];
}

/** Rule + labels → a stable key: a digest of the labels sorted by name (they include `alertname`). */
export function fingerprint(labels: Readonly<Record<string, string>>): string {
  const sorted = Object.keys(labels)
    .sort()
    .map((name) => [name, labels[name]]);
  return createHash('sha256').update(JSON.stringify(sorted)).digest('hex').slice(0, 16);
}

const transition = (alert: Alert, from: AlertState | 'inactive', atMs: number): AlertTransition => ({
  id: `${alert.fingerprint}-${alert.activeSinceMs}-${alert.state}`,
  from,
  to: alert.state,
  atMs,
  alert,
});

const sameRecord = (a: Record<string, string>, b: Record<string, string>): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * @param evaluated names of the rules evaluated this cycle; an active alert of a rule not among them is kept
 *   when the rule still exists (`known`), resolved when the rule is gone.
 */
export function step(
  before: ReadonlyMap<string, Alert>,
  observed: ReadonlyMap<string, Observation>,
  evaluated: ReadonlySet<string>,
  known: ReadonlySet<string>,
  now: number,
): StepResult {
  const active = new Map<string, Alert>();
  const changed: Alert[] = [];
  const transitions: AlertTransition[] = [];
  for (const [key, observation] of observed) {
    const { rule } = observation;
    const existing = before.get(key);
    if (existing === undefined) {
      const firing = rule.forMs === 0;
      const alert: Alert = {
        fingerprint: key,
        rule: rule.name,
        kind: rule.kind,
        severity: rule.severity,
        state: firing ? 'firing' : 'pending',
        labels: observation.labels,
        annotations: observation.annotations,
        activeSinceMs: now,
        firingSinceMs: firing ? now : undefined,
        resolvedAtMs: undefined,
        dashboardPath: observation.dashboardPath,
      };
      active.set(key, alert);
      changed.push(alert);
      transitions.push(transition(alert, 'inactive', now));
      continue;
    }
    const fires = existing.state === 'pending' && now - existing.activeSinceMs >= rule.forMs;
    const alert: Alert = {
      ...existing,
      state: fires ? 'firing' : existing.state,
      firingSinceMs: fires ? now : existing.firingSinceMs,
      annotations: observation.annotations,
      dashboardPath: observation.dashboardPath,
    };
    active.set(key, alert);
    if (fires) transitions.push(transition(alert, 'pending', now));
    if (fires || !sameRecord(existing.annotations, alert.annotations) || existing.dashboardPath !== alert.dashboardPath) changed.push(alert);
  }
  for (const [key, existing] of before) {
    if (observed.has(key)) continue;
    if (!evaluated.has(existing.rule) && known.has(existing.rule)) {
      active.set(key, existing);
      continue;
    }
    const resolved: Alert = { ...existing, state: 'resolved', resolvedAtMs: now };
    changed.push(resolved);
    transitions.push(transition(resolved, existing.state, now));
  }
  return { active, changed, transitions };
}
