// BENCH_SMOKE=1 (the test suite's smoke run): every benchmark runs its whole path, exactness checks included, at
// sizes that take seconds. The figures it prints then mean nothing.
export const SMOKE = process.env.BENCH_SMOKE === '1';

/** `full` normally, `smoke` in a smoke run. */
export const size = (full, smoke) => (SMOKE ? smoke : full);

/** Positional numeric arguments, each defaulting to its full size or, in a smoke run, its smoke size. */
export function numericArgs(args, defaults) {
  return defaults.map(([full, smoke], index) => (args[index] === undefined ? size(full, smoke) : Number(args[index])));
}
