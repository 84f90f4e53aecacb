// Alert evaluation time: one cycle of the built-in rules (one of each kind) over the benchmark fleet of 500
// instances (20 services × 25), 50 client versions, 20 extension ids, with days of minute rollups, read through
// the SQLite store in process: median and p95 of the cycle, the longest the event loop was blocked meanwhile
// (ingest waits that long at most), each rule alone, and the alerts found.
//
//   npm run build && node test/bench/alert-evaluation.mjs
//   env: BENCH_DAYS (2), BENCH_RUNS (20), BENCH_STRIDE (5: each instance reports every 5 minutes)
//
// The instances carry no advertisement here (the loader writes rollups only): the fleet rules see live instances
// with nothing advertised, the traffic rules (negotiation drop, client regression, -32021, new ids) all the rows.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { join } from 'node:path';
import { Snapshot, evaluateCondition } from '../../dist/collector/alerting/conditions/index.js';
import { AlertEngine, defaultRules } from '../../dist/collector/alerting/engine.js';
import { DEFAULT_RETENTION } from '../../dist/collector/store/store.js';
import { openSqliteStore } from '../../dist/collector/store/sqlite/index.js';
import { fleet } from './lib/fleet.mjs';
import { loadRollups } from './lib/rollup-loader.mjs';
import { size } from './lib/smoke.mjs';

const DAYS = Number(process.env.BENCH_DAYS ?? size(2, 1));
const RUNS = Number(process.env.BENCH_RUNS ?? size(20, 2));
const STRIDE = Number(process.env.BENCH_STRIDE ?? size(5, 240));

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
const silent = { info() {}, warn() {}, error() {} };

const dir = mkdtempSync(join(tmpdir(), 'extscope-bench-alerts-'));
const dbPath = join(dir, 'alerts.db');
try {
  const started = performance.now();
  const { instances, clients } = fleet({ clientsPerService: 10 });
  const loaded = await loadRollups(dbPath, { instances, days: DAYS, stride: STRIDE, seed: 1, errorRate: 0.3 });
  console.log(
    `alerts: ${loaded.instances} instances (20 services × 25), ${clients.length} client versions, 20 extension ids, ${DAYS} days: ` +
      `${loaded.points.toLocaleString('en')} points, ${loaded.requests.toLocaleString('en')} requests; database ${(statSync(dbPath).size / 1e6).toFixed(0)} MB, loaded in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  const store = openSqliteStore({ path: dbPath, clock: Date.now, retention: DEFAULT_RETENTION, synchronous: 'normal', examplesPerCell: 5 });
  const rules = defaultRules(undefined);
  // The store's reads, timed one by one (each runs synchronously inside: the longest is the longest block).
  const reads = new Map();
  const timed = (name) => async (query) => {
    const t0 = performance.now();
    const result = await store.reader[name](query);
    const ms = performance.now() - t0;
    const label = `${name}${query.toMs - query.fromMs > 2 * 86_400_000 ? ' (hours)' : ''}`;
    reads.set(label, Math.max(reads.get(label) ?? 0, ms));
    return result;
  };
  const source = { instances: timed('instances'), cellTotals: timed('cellTotals'), requiredTrend: timed('requiredTrend') };
  const engine = new AlertEngine({
    rules,
    source,
    states: store.alerts,
    clock: Date.now,
    staleAfterMs: 5 * 60_000,
    instanceTtlMs: 7 * 86_400_000,
    log: silent,
    intervalMs: 3_600_000,
  });
  await engine.start();
  let cycle;
  for (let run = 0; run < 3; run++) cycle = await engine.evaluate();
  const times = [];
  // The longest the event loop waited during the cycles: how long ingest could be held up at most.
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  for (let run = 0; run < RUNS; run++) {
    const t0 = performance.now();
    cycle = await engine.evaluate();
    times.push(performance.now() - t0);
  }
  delay.disable();
  times.sort((a, b) => a - b);
  const active = await store.alerts.activeAlerts();
  const perRule = new Map();
  for (const alert of active) perRule.set(alert.rule, (perRule.get(alert.rule) ?? 0) + 1);
  const byRule = [...perRule].map(([rule, count]) => `${rule} ${count}`);
  console.log(
    `        ${rules.rules.length} built-in rules, ${RUNS} cycles after 3 warm-up: median ${percentile(times, 50).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms; longest event-loop block ${(delay.max / 1e6).toFixed(1)} ms`,
  );
  console.log(`        longest single read, ms: ${[...reads].map(([name, ms]) => `${name} ${ms.toFixed(1)}`).join(', ')}`);
  console.log(`        alerts pending or firing: ${active.length} (${byRule.join(', ') || 'none'}); firing in the last cycle: ${cycle.firing.length}`);
  // Each rule alone, on a snapshot of its own (no reads shared with other rules).
  const perRuleTimes = [];
  for (const rule of rules.rules) {
    const ruleTimes = [];
    for (let run = 0; run < Math.max(5, Math.floor(RUNS / 2)); run++) {
      const t0 = performance.now();
      await evaluateCondition(rule, new Snapshot(store.reader, { now: Date.now(), staleAfterMs: 5 * 60_000, instanceTtlMs: 7 * 86_400_000 }));
      ruleTimes.push(performance.now() - t0);
    }
    ruleTimes.sort((a, b) => a - b);
    perRuleTimes.push(`${rule.name} ${percentile(ruleTimes, 50).toFixed(1)}`);
  }
  console.log(`        per rule alone, median ms: ${perRuleTimes.join(', ')}`);
  await engine.shutdown();
  await store.lifecycle.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
