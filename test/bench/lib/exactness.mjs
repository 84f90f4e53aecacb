// The benchmarks' exactness checks: a benchmark whose record is off by one request has measured something else,
// so a mismatch fails the run (exit code 1) instead of printing a figure beside it.
// BENCH_BREAK_EXACTNESS=1 adds one to every expected count, so a test can see a mismatch fail the run.
const BREAK = process.env.BENCH_BREAK_EXACTNESS === '1';

export class ExactnessError extends Error {}

/**
 * Prints `exactness: <what>: <actual> of <expected>: exact` and returns, or throws an {@link ExactnessError} naming
 * both counts. Counts are compared with `===`, so a count that is `undefined` (not read) fails too.
 */
export function checkExact(what, actual, expected) {
  const wanted = BREAK && typeof expected === 'number' ? expected + 1 : expected;
  const exact = actual === wanted;
  console.log(`exactness: ${what}: ${String(actual)} of ${String(wanted)}: ${exact ? 'exact' : 'MISMATCH'}`);
  if (!exact) throw new ExactnessError(`${what}: ${String(actual)}, expected ${String(wanted)}`);
}

/** As {@link checkExact}, for two values that must be the same (compared as JSON), such as two backends' answers. */
export function checkSame(what, left, right) {
  const same = JSON.stringify(left) === JSON.stringify(right) && !BREAK;
  console.log(`exactness: ${what}: ${same ? 'identical' : 'MISMATCH'}`);
  if (!same) throw new ExactnessError(`${what}: not identical`);
}
