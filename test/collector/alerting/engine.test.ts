/**
 * The engine's lifecycle over a real collector's store: `for`, deduplication, notifiers handed every cycle
 * (one that throws stops nothing), state resumed after a restart without repeating transitions, a failed read
 * that resolves nothing, and rules removed by a reload resolving their alerts.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AlertDataSource } from '../../../collector/alerting/conditions/index.js';
import { AlertEngine, type AlertLog } from '../../../collector/alerting/engine.js';
import type { EvaluationCycle, Notifier } from '../../../collector/model/alerts.js';
import { loadRulesFile } from '../../../collector/alerting/rules/load.js';
import type { RuleSet } from '../../../collector/alerting/rules/rule.js';
import { type TestCollector, tempDir } from '../helpers/collector.js';
import { alertingCollector, send } from './helpers.js';

const MINUTE = 60_000;
const NOW = Date.UTC(2026, 5, 1, 12, 0, 30);

function recorder(): Notifier & { cycles: EvaluationCycle[]; closed: boolean } {
  return {
    name: 'recorder',
    cycles: [],
    closed: false,
    deliver(cycle) {
      this.cycles.push(cycle);
    },
    async close() {
      this.closed = true;
    },
  };
}

const throwing: Notifier = {
  name: 'broken',
  deliver() {
    throw new Error('this channel is broken');
  },
  async close() {},
};

function log(): AlertLog & { lines: string[] } {
  const lines: string[] = [];
  const write = (first: unknown, second?: unknown): void => void lines.push(typeof first === 'string' ? first : String(second));
  return { lines, info: write, warn: write, error: write } as AlertLog & { lines: string[] };
}

const moves = (cycle: EvaluationCycle): string[] => cycle.transitions.map((t) => `${t.alert.labels['instance']} ${t.from}>${t.to}`);

describe('alert engine', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;
  let clock: { now: number };
  let rulesPath: string;
  let initial: RuleSet;

  beforeEach(async () => {
    temp = await tempDir();
    ({ collector, clock } = await alertingCollector(temp.dir, 'rules: []\n', NOW));
    rulesPath = join(temp.dir, 'engine-rules.yaml');
    await writeFile(
      rulesPath,
      'rules:\n  - { name: stale, kind: stale_instance, after: 10m, minUptime: 0s, for: 2m }\n  - { name: stale-copy, kind: stale_instance, after: 10m, minUptime: 0s, for: 0s }\n',
    );
    initial = await loadRulesFile(rulesPath);
  });
  afterEach(async () => {
    await collector.close();
    await temp.cleanup();
  });

  const engine = (notifiers: Notifier[], lines = log(), source: AlertDataSource = collector.store.reader): AlertEngine =>
    new AlertEngine({
      rules: initial,
      rulesPath,
      source,
      states: collector.store.alerts,
      clock: () => clock.now,
      staleAfterMs: 5 * MINUTE,
      instanceTtlMs: 7 * 24 * 60 * MINUTE,
      notifiers,
      log: lines,
      intervalMs: 3_600_000,
    });

  it('pending until `for` has passed, then firing; every cycle to every notifier, firing alerts re-sent; a broken notifier stops nothing', async () => {
    await send(collector.url, { service: 'shop', instance: 'shop-1', atMs: NOW, requests: [{ count: 1 }] });
    const notifier = recorder();
    const lines = log();
    const first = engine([throwing, notifier], lines);
    await first.start();
    clock.now = NOW + 11 * MINUTE;
    expect(moves(await first.evaluate())).toEqual(['shop-1 inactive>pending', 'shop-1 inactive>firing']);
    clock.now = NOW + 12 * MINUTE;
    expect(moves(await first.evaluate())).toEqual([]);
    clock.now = NOW + 13 * MINUTE;
    expect(moves(await first.evaluate())).toEqual(['shop-1 pending>firing']);
    clock.now = NOW + 14 * MINUTE;
    const quiet = await first.evaluate();
    expect(moves(quiet)).toEqual([]);
    expect(quiet.firing.map((alert) => alert.rule).sort()).toEqual(['stale', 'stale-copy']);
    expect(notifier.cycles.map((cycle) => cycle.atMs - NOW)).toEqual([11, 12, 13, 14].map((m) => m * MINUTE));
    expect(lines.lines.filter((line) => line.includes('notifier broken failed'))).toHaveLength(4);
    // Transition ids are unique: a delivery channel can deliver each once.
    const ids = notifier.cycles.flatMap((cycle) => cycle.transitions.map((t) => t.id));
    expect(new Set(ids).size).toBe(ids.length);
    await first.shutdown();
    expect(notifier.closed).toBe(true);
  });

  it('a restarted engine resumes from the stored states: no transition repeated; a failed read resolves nothing; a rule removed by reload resolves', async () => {
    await send(collector.url, { service: 'shop', instance: 'shop-1', atMs: NOW, requests: [{ count: 1 }] });
    const first = engine([]);
    await first.start();
    clock.now = NOW + 11 * MINUTE;
    await first.evaluate();
    await first.shutdown();

    const notifier = recorder();
    const second = engine([notifier]);
    await second.start();
    clock.now = NOW + 12 * MINUTE;
    expect(moves(await second.evaluate())).toEqual([]);
    clock.now = NOW + 13 * MINUTE;
    expect(moves(await second.evaluate())).toEqual(['shop-1 pending>firing']);
    await second.shutdown();

    const lines = log();
    const { reader } = collector.store;
    const failing = engine([], lines, {
      instances: () => Promise.reject(new Error('the database is away')),
      cellTotals: reader.cellTotals.bind(reader),
      requiredTrend: reader.requiredTrend.bind(reader),
    });
    await failing.start();
    clock.now = NOW + 14 * MINUTE;
    expect(moves(await failing.evaluate())).toEqual([]);
    expect(lines.lines.some((line) => line.includes('alert rule stale could not be evaluated'))).toBe(true);
    expect((await collector.store.alerts.activeAlerts()).map((alert) => `${alert.rule} ${alert.state}`).sort()).toEqual(['stale firing', 'stale-copy firing']);

    await writeFile(rulesPath, 'rules:\n  - { name: stale, kind: stale_instance, after: 10m, minUptime: 0s, for: 2m }\n');
    expect(await failing.reload()).toMatchObject({ ok: true });
    // The read still fails: the remaining rule's alert stays firing, the removed rule's is resolved.
    const cycle = await failing.evaluate();
    expect(cycle.transitions.map((t) => `${t.alert.rule} ${t.from}>${t.to}`)).toEqual(['stale-copy firing>resolved']);
    expect(cycle.firing.map((alert) => alert.rule)).toEqual(['stale']);
    await failing.shutdown();
  });
});
