/**
 * The rule engine: evaluates every rule on a schedule over one snapshot of the store's data, moves each alert
 * through pending → firing → resolved (state.ts), stores the changes, and hands each cycle to every notifier.
 * One start/stop component: where several collectors share a database, exactly one of them runs it.
 */
import { performance } from 'node:perf_hooks';
import type { FastifyBaseLogger } from 'fastify';
import type { Component } from '../model/component.js';
import type { AlertStateStore } from '../store/store.js';
import { annotate } from './annotations.js';
import { type AlertDataSource, Snapshot, evaluateCondition } from './conditions/index.js';
import { inScope } from './conditions/finding.js';
import type { Alert, AlertTransition, EvaluationCycle, Notifier } from '../model/alerts.js';
import { DEFAULT_RULES as DEFAULT_RULE_SPECS } from './rules/defaults.js';
import { RulesFileError, formatRuleErrors, loadRulesFile, parseRules } from './rules/load.js';
import type { RuleSet } from './rules/rule.js';
import { type Observation, fingerprint, step } from './state.js';

export type AlertLog = Pick<FastifyBaseLogger, 'info' | 'warn' | 'error'>;

/** Told about each cycle (the collector's /metrics, see ops/alert-metrics.ts). */
export interface AlertObserver {
  cycleFinished(report: CycleReport): void;
  rulesLoaded(rules: RuleSet, ok: boolean): void;
}

export interface CycleReport {
  atMs: number;
  seconds: number;
  /** Pending and firing after the cycle. */
  active: readonly Alert[];
  /** Rules whose condition could not be evaluated (a failed read). */
  failedRules: readonly string[];
}

export interface AlertEngineOptions {
  rules: RuleSet;
  /** The rules file, re-read by {@link AlertEngine.reload}; absent: the defaults, and reload has nothing to read. */
  rulesPath?: string | undefined;
  source: AlertDataSource;
  states: AlertStateStore;
  clock: () => number;
  /** As in the fleet view: an instance not heard from for this long is stale. */
  staleAfterMs: number;
  /** Instances not heard from for this long are not looked at. */
  instanceTtlMs: number;
  /** Each gets every cycle; the engine closes them at shutdown. */
  notifiers?: readonly Notifier[];
  observer?: AlertObserver | undefined;
  log: AlertLog;
  /** Overrides the rules file's `interval`. */
  intervalMs?: number | undefined;
  /**
   * Where several collectors share the store: runs a scheduled cycle only on the collector that holds the job
   * (the store's leadership), resolving false where another one does. Absent: every cycle runs here.
   */
  exclusive?: ((work: () => Promise<void>) => Promise<boolean>) | undefined;
}

export type ReloadOutcome = { ok: true; rules: RuleSet } | { ok: false; message: string };

export interface AlertStatus {
  source: string | undefined;
  intervalMs: number;
  rules: number;
  lastEvaluationMs: number | undefined;
}

/** The labels a rule's scope limits, by scope dimension. */
const SCOPED_LABELS = [
  ['services', 'service'],
  ['clients', 'client'],
  ['extensions', 'extension'],
] as const;

/** How long shutdown waits for notifiers to finish what is in flight. */
const NOTIFIER_CLOSE_MS = 5000;

export class AlertEngine implements Component {
  private ruleSet: RuleSet;
  private active: Map<string, Alert> | undefined;
  /** Changes a failed store write left behind, written with the next cycle's. */
  private unsaved = { alerts: new Map<string, Alert>(), transitions: [] as AlertTransition[] };
  private chain: Promise<unknown> = Promise.resolve();
  private reloads: Promise<unknown> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastEvaluationMs: number | undefined;
  /** Whether the last scheduled cycle ran here (under {@link AlertEngineOptions.exclusive}). */
  private leading = false;

  constructor(private readonly options: AlertEngineOptions) {
    this.ruleSet = options.rules;
  }

  get rules(): RuleSet {
    return this.ruleSet;
  }

  get intervalMs(): number {
    return this.options.intervalMs ?? this.ruleSet.intervalMs;
  }

  status(): AlertStatus {
    return { source: this.ruleSet.source, intervalMs: this.intervalMs, rules: this.ruleSet.rules.length, lastEvaluationMs: this.lastEvaluationMs };
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.options.observer?.rulesLoaded(this.ruleSet, true);
    await this.loadActive();
    // Without a store's leadership, what the last run left unfinished is sent now; with one (every collector),
    // by whoever takes evaluation, at its first cycle.
    if (this.options.exclusive === undefined) await this.resumeDeliveries();
    this.schedule();
  }

  private async resumeDeliveries(): Promise<void> {
    await Promise.allSettled((this.options.notifiers ?? []).map((notifier) => notifier.resume?.()));
  }

  async shutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.chain;
    const notifiers = this.options.notifiers ?? [];
    await Promise.race([
      Promise.allSettled(notifiers.map((notifier) => notifier.close())),
      new Promise((resolve) => setTimeout(resolve, NOTIFIER_CLOSE_MS).unref()),
    ]);
  }

  /** Runs one cycle now (after any cycle in progress); the schedule calls it too. */
  evaluate(): Promise<EvaluationCycle> {
    const run = this.chain.then(() => this.cycle());
    this.chain = run.catch(() => undefined);
    return run;
  }

  /**
   * Reads the rules file again (SIGHUP), off the event loop. An invalid file changes nothing: the rules in force
   * stay, and the outcome (also logged) says why. Reloads run one after the other, so the last signal's file wins.
   */
  reload(): Promise<ReloadOutcome> {
    const run = this.reloads.then(() => this.reloadNow());
    this.reloads = run.catch(() => undefined);
    return run;
  }

  private async reloadNow(): Promise<ReloadOutcome> {
    const path = this.options.rulesPath;
    if (path === undefined) {
      this.options.log.info('rules reload: no rules file configured (--rules / EXTSCOPE_RULES); the default rules stay');
      return { ok: true, rules: this.ruleSet };
    }
    let rules: RuleSet;
    try {
      rules = await loadRulesFile(path);
    } catch (error) {
      const message = error instanceof RulesFileError ? error.message : `rules file ${path}: ${(error as Error).message}`;
      this.options.log.error(`rules reload failed, keeping the ${this.ruleSet.rules.length} rules in force: ${message}`);
      this.options.observer?.rulesLoaded(this.ruleSet, false);
      return { ok: false, message };
    }
    const interval = this.intervalMs;
    this.ruleSet = rules;
    this.options.log.info({ rules: rules.rules.length, file: path }, `rules reloaded from ${path}: ${rules.rules.length} rules`);
    this.options.observer?.rulesLoaded(rules, true);
    if (this.intervalMs !== interval && this.timer !== undefined) this.schedule();
    return { ok: true, rules };
  }

  private schedule(): void {
    clearInterval(this.timer);
    if (this.stopped) return;
    this.timer = setInterval(() => {
      this.scheduledCycle().catch((error: unknown) => this.options.log.error({ err: error }, 'alert evaluation failed'));
    }, this.intervalMs).unref();
  }

  private async scheduledCycle(): Promise<void> {
    const exclusive = this.options.exclusive;
    if (exclusive === undefined) {
      await this.evaluate();
      return;
    }
    const ran = await exclusive(async () => {
      if (!this.leading) {
        // Taken over (or taken back): another collector may have moved every alert since, and notified of it.
        // Resume from the states it stored, so that no transition is made, or sent, twice.
        this.active = undefined;
        this.unsaved = { alerts: new Map(), transitions: [] };
        this.leading = true;
        // And send what the collector that evaluated before left unfinished (it stopped, or died).
        await this.resumeDeliveries();
      }
      await this.evaluate();
    });
    if (!ran) this.leading = false;
  }

  private async loadActive(): Promise<Map<string, Alert>> {
    this.active ??= new Map((await this.options.states.activeAlerts()).map((alert) => [alert.fingerprint, alert]));
    return this.active;
  }

  private async cycle(): Promise<EvaluationCycle> {
    const started = performance.now();
    const before = await this.loadActive();
    const now = this.options.clock();
    const { rules } = this.ruleSet;
    const snapshot = new Snapshot(this.options.source, { now, staleAfterMs: this.options.staleAfterMs, instanceTtlMs: this.options.instanceTtlMs });
    const observed = new Map<string, Observation>();
    const evaluated = new Set<string>();
    const failedRules: string[] = [];
    for (const rule of rules) {
      let findings;
      try {
        findings = await evaluateCondition(rule, snapshot);
      } catch (error) {
        failedRules.push(rule.name);
        this.options.log.error({ err: error, rule: rule.name }, `alert rule ${rule.name} could not be evaluated; its alerts stay as they were`);
        continue;
      }
      evaluated.add(rule.name);
      for (const finding of findings) {
        // The conditions apply the scope where it changes a sum; a finding's labels are held to it here as well.
        if (!SCOPED_LABELS.every(([dimension, label]) => finding.labels[label] === undefined || inScope(rule.scope, dimension, finding.labels[label])))
          continue;
        const labels = { ...finding.labels, ...rule.labels, alertname: rule.name, severity: rule.severity };
        const key = fingerprint(labels);
        if (!observed.has(key)) observed.set(key, { rule, labels, annotations: annotate(rule, finding, labels), dashboardPath: finding.dashboardPath });
      }
    }
    const result = step(before, observed, evaluated, new Set(rules.map((rule) => rule.name)), now);
    this.active = result.active;
    await this.save(result.changed, result.transitions);
    const cycle: EvaluationCycle = {
      atMs: now,
      transitions: result.transitions,
      firing: [...result.active.values()].filter((alert) => alert.state === 'firing'),
    };
    for (const notifier of this.options.notifiers ?? []) {
      try {
        notifier.deliver(cycle);
      } catch (error) {
        this.options.log.error({ err: error, notifier: notifier.name }, `notifier ${notifier.name} failed to take the cycle`);
      }
    }
    this.lastEvaluationMs = now;
    this.options.observer?.cycleFinished({ atMs: now, seconds: (performance.now() - started) / 1000, active: [...result.active.values()], failedRules });
    return cycle;
  }

  private async save(alerts: readonly Alert[], transitions: readonly AlertTransition[]): Promise<void> {
    for (const alert of alerts) this.unsaved.alerts.set(`${alert.fingerprint}-${alert.activeSinceMs}`, alert);
    this.unsaved.transitions.push(...transitions);
    if (this.unsaved.alerts.size === 0 && this.unsaved.transitions.length === 0) return;
    try {
      await this.options.states.recordAlerts({ alerts: [...this.unsaved.alerts.values()], transitions: this.unsaved.transitions });
      this.unsaved = { alerts: new Map(), transitions: [] };
    } catch (error) {
      this.options.log.error({ err: error }, 'alert states could not be stored; retried with the next evaluation');
    }
  }
}

/** The rules a collector starts with: the file's (throws {@link RulesFileError} when it is invalid), or the defaults. */
export async function initialRules(path: string | undefined): Promise<RuleSet> {
  if (path !== undefined) return loadRulesFile(path);
  return defaultRules();
}

/** The built-in rules. */
export function defaultRules(): RuleSet {
  const outcome = parseRules(JSON.stringify({ rules: DEFAULT_RULE_SPECS }), '(default rules)');
  if (!outcome.ok) throw new Error(`the default rules are invalid: ${formatRuleErrors('(default rules)', outcome.errors)}`);
  return { ...outcome.rules, source: undefined };
}
