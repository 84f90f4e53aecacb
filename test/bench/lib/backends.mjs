// `--backend sqlite|postgres|both` (default both) for the benchmarks that run the collector on either store.
export function backendsFrom(args) {
  const value = args.find((arg) => arg.startsWith('--backend='))?.slice('--backend='.length) ?? args[args.indexOf('--backend') + 1];
  const chosen = args.includes('--backend') || value !== undefined ? value : 'both';
  if (chosen === 'both') return ['sqlite', 'postgres'];
  if (chosen === 'sqlite' || chosen === 'postgres') return [chosen];
  throw new Error(`--backend ${chosen}: sqlite, postgres or both`);
}
