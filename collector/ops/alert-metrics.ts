import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { AlertObserver, CycleReport } from '../alerting/engine.js';
import type { Alert } from '../model/alerts.js';
import type { RuleSet } from '../alerting/rules/rule.js';

const STATE_GAUGE = 'extscope_alerts';
/** Labels every series of the state gauge has; the alerts' own labels come after. */
const FIXED = ['alertname', 'alertstate', 'rule', 'kind', 'severity'] as const;

/**
 * Alert states on /metrics, shaped like Prometheus' own `ALERTS` series: one series per pending or firing
 * alert, value 1, with `alertstate`, the rule and every label of the alert (so Prometheus users can alert,
 * route and silence from their own rules). Also how long each evaluation took and how the rules file loaded.
 */
export class AlertMetrics implements AlertObserver {
  private states: Gauge<string> | undefined;
  private labelNames: string[] = [];
  private readonly duration: Histogram;
  private readonly lastEvaluation: Gauge;
  private readonly failures: Counter<'rule'>;
  private readonly rules: Gauge;
  private readonly reloads: Counter<'result'>;

  constructor(private readonly registry: Registry) {
    const registers = [registry];
    this.duration = new Histogram({
      name: 'extscope_alert_evaluation_duration_seconds',
      help: 'Time one evaluation of every alert rule took',
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30],
      registers,
    });
    this.lastEvaluation = new Gauge({
      name: 'extscope_alert_last_evaluation_timestamp_seconds',
      help: 'When the alert rules were last evaluated (Unix seconds)',
      registers,
    });
    this.failures = new Counter({
      name: 'extscope_alert_rule_failures_total',
      help: 'Evaluations of a rule that failed (its alerts kept their state)',
      labelNames: ['rule'],
      registers,
    });
    this.rules = new Gauge({ name: 'extscope_alert_rules', help: 'Alert rules in force', registers });
    this.reloads = new Counter({
      name: 'extscope_alert_rules_loads_total',
      help: 'Loads of the rules file (start and reloads), by result',
      labelNames: ['result'],
      registers,
    });
    this.gauge(['alertname', 'alertstate', 'rule', 'kind', 'severity']);
  }

  rulesLoaded(rules: RuleSet, ok: boolean): void {
    this.rules.set(rules.rules.length);
    this.reloads.inc({ result: ok ? 'success' : 'failure' });
  }

  cycleFinished(report: CycleReport): void {
    this.duration.observe(report.seconds);
    this.lastEvaluation.set(report.atMs / 1000);
    for (const rule of report.failedRules) this.failures.inc({ rule });
    this.show(report.active);
  }

  private gauge(labelNames: string[]): Gauge<string> {
    if (this.states !== undefined) this.registry.removeSingleMetric(STATE_GAUGE);
    this.labelNames = labelNames;
    this.states = new Gauge({
      name: STATE_GAUGE,
      help: 'Alerts pending or firing (1), with their rule and labels, as Prometheus ALERTS',
      labelNames,
      registers: [this.registry],
    });
    return this.states;
  }

  private show(active: readonly Alert[]): void {
    // The label set is the union of the alerts' labels: a gauge is rebuilt when it changes (rules reloaded).
    const names = new Set<string>(FIXED);
    for (const alert of active) for (const name of Object.keys(alert.labels)) names.add(name);
    const wanted = [...names].sort();
    const gauge = wanted.join() === [...this.labelNames].sort().join() && this.states !== undefined ? this.states : this.gauge(wanted);
    gauge.reset();
    for (const alert of active) {
      const labels: Record<string, string> = Object.fromEntries(wanted.map((name) => [name, '']));
      Object.assign(labels, alert.labels, { alertname: alert.rule, alertstate: alert.state, rule: alert.rule, kind: alert.kind, severity: alert.severity });
      gauge.set(labels, 1);
    }
  }
}
