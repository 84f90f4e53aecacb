import { FoldFirstReader, foldBeforeEachRead } from '../common/fold-first-reader.js';
import { readHorizons } from '../common/windows.js';
import type { RollupReader } from '../store.js';
import type { SqliteCore } from './core.js';
import { ExamplesReader } from './readers/examples.js';
import { InstancesReader } from './readers/instances.js';
import { RollupsReader } from './readers/rollups.js';
import { TrendsReader } from './readers/trends.js';

/** The reads, behind the fold-first reader; the instances and examples are written by the apply itself. */
export function sqliteReader(core: SqliteCore): RollupReader {
  const { clock, retention } = core.options;
  // With the clock: a range ending now may read the day or hour under way from its own row (common/bucket-plan.ts).
  const rollups = new RollupsReader(core.db, () => readHorizons(clock(), retention));
  const instances = new InstancesReader(core.db);
  const examples = new ExamplesReader(core.db);
  return new FoldFirstReader(foldBeforeEachRead(core.fold), rollups, new TrendsReader(core.db), {
    instances: (query) => instances.read(query),
    examples: async (query) => examples.read(query),
  });
}
