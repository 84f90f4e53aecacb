import { MS_PER_DAY, MS_PER_HOUR } from '../../model/time.js';
import { FoldFirstReader } from '../common/fold-first-reader.js';
import type { RollupReader } from '../store.js';
import type { SqliteCore } from './core.js';
import { ExamplesReader } from './readers/examples.js';
import { InstancesReader } from './readers/instances.js';
import { RollupsReader } from './readers/rollups.js';
import { TrendsReader } from './readers/trends.js';

/** A matrix over more than two days is answered in whole hours (see docs/api.md). */
const HOURLY_ABOVE_MS = 2 * MS_PER_DAY;

/** The reads, behind the fold-first reader; the instances and examples are written by the apply itself. */
export function sqliteReader(core: SqliteCore): RollupReader {
  const { clock, retention } = core.options;
  const rollups = new RollupsReader(core.db, () => ({
    minuteHorizonMs: clock() - retention.minuteDays * MS_PER_DAY + MS_PER_HOUR,
    hourlyAboveMs: HOURLY_ABOVE_MS,
    nowMs: clock(),
  }));
  const instances = new InstancesReader(core.db);
  const examples = new ExamplesReader(core.db);
  return new FoldFirstReader(core.fold, rollups, new TrendsReader(core.db), {
    instances: (query) => instances.read(query),
    examples: async (query) => examples.read(query),
  });
}
