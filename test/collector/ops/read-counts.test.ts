import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerReadCounts } from '../../../collector/ops/read-counts.js';

/** The exposition's lines for one metric name: `# HELP`, `# TYPE` and samples. */
const linesOf = (exposition: string, name: string): string[] =>
  exposition.split('\n').filter((line) => line.startsWith(`${name} `) || line.startsWith(`# HELP ${name} `) || line.startsWith(`# TYPE ${name} `));

describe('registerReadCounts', () => {
  it('exposes each count as a counter `<name>_total` and, deprecated, as the gauge `<name>`, both the value read at each scrape', async () => {
    const registry = new Registry();
    let folds = 3;
    let reads = 0;
    registerReadCounts(registry, [
      {
        name: 'extscope_collector_fold_failures',
        help: 'Folds that failed since start',
        read: async () => {
          reads++;
          return folds;
        },
      },
    ]);
    const first = await registry.metrics();
    expect(linesOf(first, 'extscope_collector_fold_failures_total')).toEqual([
      '# HELP extscope_collector_fold_failures_total Folds that failed since start',
      '# TYPE extscope_collector_fold_failures_total counter',
      'extscope_collector_fold_failures_total 3',
    ]);
    expect(linesOf(first, 'extscope_collector_fold_failures')).toEqual([
      '# HELP extscope_collector_fold_failures Deprecated, removed in the next release: use extscope_collector_fold_failures_total. Folds that failed since start',
      '# TYPE extscope_collector_fold_failures gauge',
      'extscope_collector_fold_failures 3',
    ]);
    expect(reads).toBe(2);

    // The counter is the value read, not a sum of the values read: a second scrape after 2 more folds says 5.
    folds = 5;
    const second = await registry.metrics();
    expect(linesOf(second, 'extscope_collector_fold_failures_total').at(-1)).toBe('extscope_collector_fold_failures_total 5');
    expect(linesOf(second, 'extscope_collector_fold_failures').at(-1)).toBe('extscope_collector_fold_failures 5');
  });
});
