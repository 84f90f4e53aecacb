// Every benchmark entry point, run end to end at smoke size (BENCH_SMOKE=1: seconds each): it completes, and its
// exactness checks hold (a mismatch exits non-zero). The figures a smoke run prints mean nothing and are not read.
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BENCH = fileURLToPath(new URL('../bench/', import.meta.url));
// As the store's tests: the PostgreSQL server's maintenance database, in which each run makes its own database.
const PG = process.env['EXTSCOPE_TEST_PG'] ?? 'postgres://root@127.0.0.1:5432/test';

/**
 * Every entry point (a few in more than one mode), in two lanes that run side by side, each one benchmark at a time:
 * the exit benchmark, whose agents have a bounded time to send their last export, runs before the lanes load both
 * cores, and valgrind's run and the database benchmarks are in different lanes.
 */
const LANES: [string, string[]][][] = [
  [
    ['agent-exit.mjs', []],
    // One mode under valgrind (a minute of the file's time; its stdio mode shares workers/inmemory-server.mjs).
    ['agent-instructions.mjs', ['entry']],
    ['agent-http.mjs', ['loopback']],
    ['agent-http.mjs', ['entry']],
    ['agent-stdio.mjs', []],
    ['compare-sentry.mjs', []],
    ['wrap-proxy.mjs', []],
    ['alert-delivery.mjs', []],
  ],
  [
    ['agent-path.mjs', []],
    ['agent-cost.mjs', []],
    ['matrix.mjs', ['--backend', 'both']],
    ['ingest.mjs', ['--backend', 'both']],
    ['agent-overhead.mjs', []],
    ['alert-evaluation.mjs', []],
    ['dashboard.mjs', []],
    ['ingest-stall.mjs', []],
    ['server-unknown-matrix.mjs', []],
    // npm pack of agent/ installed into an empty project (the registry's packages, as a user gets them). In this
    // lane so that the two take about as long: the other holds the two longest (valgrind's and compare-sentry.mjs).
    ['agent-install.mjs', []],
  ],
];
/** Benchmarks with nothing to count exactly (latency under load, page timings): they only have to complete. */
const UNCOUNTED = new Set(['alert-evaluation.mjs', 'dashboard.mjs', 'ingest-stall.mjs', 'wrap-proxy.mjs']);

/** Runs `job` once every job queued on the same lane before it has settled. */
const lanes = LANES.map(() => Promise.resolve());
function inLane<T>(lane: number, job: () => Promise<T>): Promise<T> {
  const result = (lanes[lane] ?? Promise.resolve()).then(job);
  lanes[lane] = result.then(
    () => undefined,
    () => undefined,
  );
  return result;
}

function bench(file: string, args: string[], env: Record<string, string> = {}) {
  return run(process.execPath, [`${BENCH}${file}`, ...args], {
    cwd: ROOT,
    env: { ...process.env, BENCH_SMOKE: '1', BENCH_PG: PG, ...env },
    maxBuffer: 64 * 2 ** 20,
    timeout: 170_000,
  });
}

describe.concurrent('benchmarks at smoke size', () => {
  it('lists every entry point of test/bench', () => {
    const listed = new Set(LANES.flat().map(([file]) => file));
    expect(
      readdirSync(BENCH)
        .filter((name) => name.endsWith('.mjs'))
        .sort(),
    ).toEqual([...listed].sort());
  });

  // Declared alternately from each lane: vitest starts a few concurrent tests at a time, in declaration order.
  const longest = Math.max(...LANES.map((jobs) => jobs.length));
  for (let index = 0; index < longest; index++) {
    LANES.forEach((jobs, lane) => {
      const job = jobs[index];
      if (job === undefined) return;
      const [file, args] = job;
      // The time includes waiting for the lane's earlier benchmarks.
      it(`${[file, ...args].join(' ')} completes with its exactness checks holding`, { timeout: 240_000 }, async () => {
        const { stdout } = await inLane(lane, () => bench(file, args));
        expect(stdout).not.toContain('MISMATCH');
        if (!UNCOUNTED.has(file)) expect(stdout).toMatch(/^exactness: .*: (exact|identical)$/m);
      });
    });
  }

  it('a benchmark whose count is off by one exits non-zero', { timeout: 240_000 }, async () => {
    const failed = await inLane(1, () => bench('agent-cost.mjs', [], { BENCH_BREAK_EXACTNESS: '1' })).then(
      () => undefined,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stdout).toMatch(/^exactness: .*: MISMATCH$/m);
    expect(failed?.stderr).toContain('ExactnessError');
  });
});
