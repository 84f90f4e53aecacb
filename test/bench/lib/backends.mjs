// `--backend sqlite|postgres|both` (or `--backend=…`; default both) for the benchmarks that run the collector on
// either store.
export function backendsFrom(args) {
  const flag = args.indexOf('--backend');
  const chosen = flag >= 0 ? args[flag + 1] : (args.find((arg) => arg.startsWith('--backend='))?.slice('--backend='.length) ?? 'both');
  if (chosen === 'both') return ['sqlite', 'postgres'];
  if (chosen === 'sqlite' || chosen === 'postgres') return [chosen];
  throw new Error(`--backend ${chosen}: sqlite, postgres or both`);
}
