/**
 * The vocabulary shared by the rule engine (rules → evaluation → alert states) and delivery (webhooks,
 * Alertmanager): what an alert is and what one change of its state looks like. Imports nothing.
 */

export const RULE_KINDS = [
  'advertisement_skew',
  'extension_withdrawn',
  'negotiation_drop',
  'client_regression',
  'missing_capability',
  'new_extension_id',
  'stale_instance',
] as const;
export type RuleKind = (typeof RULE_KINDS)[number];

export const SEVERITIES = ['info', 'warning', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** `inactive` is never stored: it is where a new alert comes from. */
export type AlertState = 'pending' | 'firing' | 'resolved';

/** One alert: a rule and one set of labels (the rule's own plus those of the condition, e.g. service, extension id). */
export interface Alert {
  /** Stable identity of rule + labels (a digest), the deduplication key. */
  fingerprint: string;
  rule: string;
  kind: RuleKind;
  severity: Severity;
  state: AlertState;
  /** Always includes `alertname` (the rule name) and `severity`. */
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** When the condition was first seen (the alert went pending). */
  activeSinceMs: number;
  firingSinceMs?: number | undefined;
  resolvedAtMs?: number | undefined;
  /** Path of the dashboard view that shows the cause (e.g. `/#/fleet?service=api`); delivery prefixes the public URL. */
  dashboardPath: string;
}

/** One state change of one alert. `id` is unique per transition, so a transition is delivered once. */
export interface AlertTransition {
  id: string;
  from: AlertState | 'inactive';
  to: AlertState;
  atMs: number;
  alert: Alert;
}

/** What one evaluation cycle hands to delivery. */
export interface EvaluationCycle {
  atMs: number;
  transitions: readonly AlertTransition[];
  /** Every alert firing after this cycle (Alertmanager wants them re-sent while firing). */
  firing: readonly Alert[];
}

/** A delivery channel. `deliver` returns at once and never throws: a channel that is down must not slow evaluation or ingest. */
export interface Notifier {
  readonly name: string;
  deliver(cycle: EvaluationCycle): void;
  /**
   * Sends again what a previous run left unfinished (queued, retrying, or abandoned at its shutdown, as the
   * delivery log says). Called by the rule engine where it evaluates: at start, or when it takes evaluation over.
   */
  resume?(): Promise<void>;
  /** Stops retries and waits (bounded) for deliveries in flight. */
  close(): Promise<void>;
}
