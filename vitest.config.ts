import { defineConfig } from 'vitest/config';

/** Every test file; each runs in exactly one project (test/suite-projects.test.ts checks that none falls out). */
const TESTS = 'test/**/*.test.ts';

/**
 * The `unit` project: files that run in-process only — no sockets, no child processes (esbuild's service is one),
 * no database server, no browser, nothing from `dist/` (so `npm run test:unit` needs no build) — and answer in
 * seconds. Classified by what a file does, not by its folder: a file starts here only once it is read and timed.
 * Everything else is `system` (or `alone`), so a new file runs there unless it is added here.
 */
export const UNIT_TESTS = [
  'test/agent/instrumentation.test.ts',
  'test/agent/observe/*.test.ts',
  'test/agent/patches/serve-stdio.test.ts',
  'test/agent/patches/server-connect.test.ts',
  'test/agent/patches/transport-tap.test.ts',
  'test/agent/proxy/*.test.ts',
  'test/agent/record/*.test.ts',
  'test/agent/run/*.test.ts',
  'test/agent/semconv.test.ts',
  'test/agent/version.test.ts',
  'test/agent/wire/*.test.ts',
  'test/support/processes.test.ts',
  'test/collector/alerting/alert-links.test.ts',
  'test/collector/alerting/delivery/delivery-log.test.ts',
  'test/collector/alerting/delivery/signature-and-config.test.ts',
  'test/collector/analysis/cell.test.ts',
  'test/collector/analysis/lifetime.test.ts',
  'test/collector/analysis/partial-steps.test.ts',
  'test/collector/analysis/matrix-server-unknown.test.ts',
  'test/collector/analysis/odd-one-out.test.ts',
  'test/collector/analysis/versions.test.ts',
  'test/collector/http/host-allow-list.test.ts',
  'test/collector/http/matrix-csv.test.ts',
  'test/collector/http/params.test.ts',
  'test/collector/http/trace-link.test.ts',
  'test/collector/ops/*.test.ts',
  'test/collector/otlp/json-mapping.test.ts',
  'test/collector/processor/*.test.ts',
  'test/collector/receiver/otlp-grpc/status.test.ts',
  'test/collector/receiver/receive-budget.test.ts',
  'test/collector/store/bucket-plan.test.ts',
  'test/collector/store/closed-range-cache.test.ts',
  'test/collector/store/cumulative-rule.test.ts',
  'test/collector/store/history-start.test.ts',
  'test/collector/store/ingest-plan.test.ts',
  'test/collector/store/overflow-rule.test.ts',
  'test/collector/store/sqlite.test.ts',
  'test/collector/version.test.ts',
  'test/collector/warm-up.test.ts',
  'test/contract/*.test.ts',
  'test/dashboard/page/*.test.ts',
  'test/e2e/replicas-compose.test.ts',
  'test/ops/lint-boundaries.test.ts',
  'test/packaging/code-maps.test.ts',
  'test/packaging/readme.test.ts',
  'test/suite-projects.test.ts',
];

/**
 * The `alone` project: system files whose assertions hold only on a machine not also running another test file —
 * they bound how long something takes while the file itself loads the collector (a health check under a read
 * flood, a shutdown under held connections, memory under a flood), or measure what a run costs. They run one at a
 * time, after everything else. Every other system file starts its own collectors, servers and databases on
 * ephemeral ports and waits on them more than it computes, so two run side by side. A system file may bound a time
 * when the bound sits seconds above a deadline of the program's own timers and the failure it is for is a wait of
 * the whole fault: a neighbour slows a timer's answer by milliseconds, not seconds. So in `system`:
 * faults/postgres-locks (answers within a 2 s readiness budget + 1 s and a 10 s deadline while a 20 s lock is held;
 * it mostly waits on that lock) and faults/proxy-deadlines (slow clients closed within 8 s and 10 s of 1 s and 2 s
 * deadlines; without them they are never closed). faults/fuzz bounds memory, not time: its bodies go a batch at a
 * time (at most that many in flight however slowly they are answered), under a heap cap, with RSS flat after the
 * warm-up; a neighbour makes the run longer, not the process larger.
 */
export const ALONE_TESTS = [
  'test/bench-smoke/benchmarks.test.ts',
  'test/faults/heavy-reads.test.ts',
  'test/faults/ingest-event-loop.test.ts',
  'test/faults/matrix-cardinality.test.ts',
  'test/faults/metrics-fleet-scrape.test.ts',
  'test/faults/outage.test.ts',
  'test/faults/proxy-memory.test.ts',
  'test/faults/stalled-senders.test.ts',
  'test/faults/unholdable-admission.test.ts',
  'test/faults/wrap-ending.test.ts',
];

export default defineConfig({
  test: {
    exclude: ['test/bench/**', 'node_modules/**', 'dist/**'],
    // Real child processes, real HTTP and real SQLite files: generous per-test time, never retried.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default'],
    // `npm test` runs all three, one group after another (projects with different worker counts need their own
    // group): unit, then system three files at a time, then the files that must run alone. A system file keeps
    // about 0.7 of a core busy (it waits on collectors, child processes, PostgreSQL and Chromium), so three of them
    // fill this 2-core machine where two left half a core idle.
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT_TESTS, maxWorkers: 2, sequence: { groupOrder: 0 } } },
      {
        extends: true,
        test: { name: 'system', include: [TESTS], exclude: [...UNIT_TESTS, ...ALONE_TESTS], maxWorkers: 3, sequence: { groupOrder: 1 } },
      },
      { extends: true, test: { name: 'alone', include: ALONE_TESTS, maxWorkers: 1, sequence: { groupOrder: 2 } } },
    ],
  },
});
