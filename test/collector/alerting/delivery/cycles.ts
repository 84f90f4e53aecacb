/** Alerts, transitions and evaluation cycles as the rule engine hands them to delivery, built by hand. */
import type { Alert, AlertState, AlertTransition, EvaluationCycle } from '../../../../collector/model/alerts.js';

let sequence = 0;

export function alert(overrides: Partial<Alert> = {}): Alert {
  const rule = overrides.rule ?? 'advertisement-skew';
  return {
    fingerprint: `fp-${rule}-${overrides.labels?.service ?? 'api'}`,
    rule,
    kind: 'advertisement_skew',
    severity: 'warning',
    state: 'pending',
    labels: { alertname: rule, severity: 'warning', service: 'api', 'extension.id': 'io.modelcontextprotocol/tasks' },
    annotations: { summary: 'instances of api advertise different extension sets' },
    activeSinceMs: Date.now() - 60_000,
    dashboardPath: '/#/fleet?service=api',
    ...overrides,
  };
}

/** Moves `from` to state `to` at `atMs`, as one transition with a fresh id. */
export function transition(from: Alert, to: AlertState, atMs = Date.now()): AlertTransition {
  const next: Alert = {
    ...from,
    state: to,
    firingSinceMs: to === 'firing' ? atMs : from.firingSinceMs,
    resolvedAtMs: to === 'resolved' ? atMs : undefined,
  };
  return { id: `t-${process.pid}-${++sequence}-${to}`, from: from.state, to, atMs, alert: next };
}

/** The first transition of a new alert. */
export function opened(start: Alert, atMs = Date.now()): AlertTransition {
  return { id: `t-${process.pid}-${++sequence}-pending`, from: 'inactive', to: 'pending', atMs, alert: { ...start, state: 'pending', activeSinceMs: atMs } };
}

export function cycle(transitions: AlertTransition[], firing: Alert[], atMs = Date.now()): EvaluationCycle {
  return { atMs, transitions, firing };
}
