// Every benchmark entry point, run end to end at smoke size (BENCH_SMOKE=1: seconds each): it completes, and its
// exactness checks hold (a mismatch exits non-zero). The figures a smoke run prints mean nothing and are not read.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BENCH = fileURLToPath(new URL('../bench/', import.meta.url));
// As the store's tests: the PostgreSQL server's maintenance database, in which each run makes its own database.
const PG = process.env['EXTSCOPE_TEST_PG'] ?? 'postgres://root@127.0.0.1:5432/test';

/**
 * Every entry point (a few in more than one mode), two at a time, in this order: the exit benchmark first and alone
 * (its agents have a bounded time to send their last export, so it runs before two benchmarks load both cores), then
 * the longest first, by what each takes alone at smoke size (seconds, beside each; valgrind's run, whose time moves
 * most with the machine's load, before the others). Whichever pair is running, the next starts as soon as one ends,
 * so the file lasts about half their sum whatever the load does to each; two fixed lanes, balanced on paper, ended
 * half a minute apart on a loaded machine.
 */
const BENCHMARKS: [string, string[]][] = [
  ['agent-exit.mjs', []], // 5
  // One mode under valgrind (its stdio mode shares workers/inmemory-server.mjs).
  ['agent-instructions.mjs', ['entry']], // 10
  ['ingest.mjs', ['--backend', 'both']], // 17
  ['dashboard.mjs', []], // 17
  ['agent-overhead.mjs', []], // 12
  ['compare-sentry.mjs', []], // 7
  // npm pack of agent/ installed into an empty project (the registry's packages, as a user gets them).
  ['agent-install.mjs', []], // 7
  ['matrix.mjs', ['--backend', 'both']], // 5
  ['alert-evaluation.mjs', []], // 5
  ['wrap-proxy.mjs', []], // 4
  ['ingest-stall.mjs', []], // 4
  ['ingest-replay.mjs', []], // 3
  ['alert-delivery.mjs', []], // 3
  ['agent-http.mjs', ['loopback']], // 2
  ['agent-stdio.mjs', []], // 2
  ['agent-http.mjs', ['entry']], // 1
  ['agent-cost.mjs', []], // 1
  ['server-unknown-matrix.mjs', []], // 0.3
  ['agent-path.mjs', []], // 0.2
];
/** The benchmark that runs alone, before the others. */
const FIRST = 'agent-exit.mjs';
/** Benchmarks with nothing to count exactly (latency under load, page timings): they only have to complete. */
const UNCOUNTED = new Set(['alert-evaluation.mjs', 'dashboard.mjs', 'ingest-stall.mjs', 'wrap-proxy.mjs']);

/** Two slots; `inSlots` takes `need` of them, first come first served, and gives them back when its job settles. */
let freeSlots = 2;
const queued: { need: number; start: () => void }[] = [];
function startQueued(): void {
  for (let next = queued[0]; next !== undefined && next.need <= freeSlots; next = queued[0]) {
    queued.shift();
    freeSlots -= next.need;
    next.start();
  }
}
async function inSlots<T>(need: number, job: () => Promise<T>): Promise<T> {
  await new Promise<void>((start) => {
    queued.push({ need, start });
    startQueued();
  });
  try {
    return await job();
  } finally {
    freeSlots += need;
    startQueued();
  }
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
    const listed = new Set(BENCHMARKS.map(([file]) => file));
    expect(
      readdirSync(BENCH)
        .filter((name) => name.endsWith('.mjs'))
        .sort(),
    ).toEqual([...listed].sort());
  });

  // Declared in the order they are to start: vitest starts a few concurrent tests at a time, in declaration order, and
  // each asks for its slots as it starts. The time includes waiting for a slot.
  for (const [file, args] of BENCHMARKS) {
    it(`${[file, ...args].join(' ')} completes with its exactness checks holding`, { timeout: 240_000 }, async () => {
      const { stdout } = await inSlots(file === FIRST ? 2 : 1, () => bench(file, args));
      expect(stdout).not.toContain('MISMATCH');
      if (!UNCOUNTED.has(file)) expect(stdout).toMatch(/^exactness: .*: (exact|identical)$/m);
    });
  }

  it(
    "ingest.mjs with BENCH_HEAP_DIR prints both collectors' allocation and collections and writes their allocation profiles",
    { timeout: 240_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'extscope-heap-'));
      try {
        // The baseline is this checkout itself: what matters is that both collectors' lines come back.
        const { stdout } = await inSlots(1, () => bench('ingest.mjs', ['--backend', 'sqlite'], { BENCH_HEAP_DIR: dir, BENCH_BASELINE: ROOT }));
        const lines = stdout.match(
          /^ +per 1,000 exports: allocated \d+ MB \(sampled; \d+ MB live at the end\); collections .*; CPU by thread main \d+\.\d\d s/gm,
        );
        expect(lines).toHaveLength(2);
        expect(readdirSync(dir).filter((name) => name.endsWith('.heapprofile'))).toHaveLength(2);
        expect(stdout).toMatch(/^exactness: .*: exact$/m);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it(
    'matrix.mjs with BENCH_PG_ORDER=time rewrites the PostgreSQL rollups by bucket, and both stores answer the same rows exactly',
    { timeout: 240_000 },
    async () => {
      const { stdout } = await inSlots(1, () => bench('matrix.mjs', ['--backend', 'both'], { BENCH_PG_ORDER: 'time' }));
      expect(stdout).toMatch(/^ +PostgreSQL rollup tables rewritten by bucket \(as a running collector writes them\) in \d+ s$/m);
      expect(stdout).toMatch(/^exactness: PostgreSQL: requests in the 7-day matrix of those loaded: \d+ of \d+: exact$/m);
      expect(stdout).toMatch(/^exactness: PostgreSQL and SQLite 7-day matrix rows: identical$/m);
      expect(stdout).not.toContain('MISMATCH');
    },
  );

  it('a benchmark whose count is off by one exits non-zero', { timeout: 240_000 }, async () => {
    const failed = await inSlots(1, () => bench('agent-cost.mjs', [], { BENCH_BREAK_EXACTNESS: '1' })).then(
      () => undefined,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stdout).toMatch(/^exactness: .*: MISMATCH$/m);
    expect(failed?.stderr).toContain('ExactnessError');
  });
});
