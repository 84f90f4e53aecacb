import { FoldFirstReader } from '../common/fold-first-reader.js';
import { FoldedReads } from './folded-reads.js';
import { readHorizons } from '../common/windows.js';
import type { RollupReader } from '../store.js';
import { asStoreError, storeRead } from './connection.js';
import type { PostgresCore } from './core.js';
import { readExamples } from './readers/examples.js';
import { readInstances } from './readers/instances.js';
import { RollupsReader } from './readers/rollups.js';
import { TrendsReader } from './readers/trends.js';

/**
 * The reads, behind the fold-first reader: every statement reading the rollups first folds what any replica
 * acknowledged, in its own round trip (folded-reads.ts; waiting for another replica's fold, or a lock on
 * `pending_increments`, at most `lock_timeout`).
 */
export function postgresReader(core: PostgresCore): RollupReader {
  const { clock, retention } = core.options;
  // With the clock: a range ending now may read the day or hour under way from its own row (common/bucket-plan.ts;
  // each statement checks that nothing is stored after the minute under way, readers/rollups.ts).
  const folded = new FoldedReads(core.pool, core.fold);
  const rollups = new RollupsReader(folded, () => readHorizons(clock(), retention));
  const rows = {
    instances: (query: Parameters<RollupReader['instances']>[0]) => storeRead(() => core.snapshot((db) => readInstances(db, query))),
    examples: (query: Parameters<RollupReader['examples']>[0]) => storeRead(() => readExamples(core.pool, query)),
  };
  return new FoldFirstReader(folded.readFold, rollups, new TrendsReader(folded), rows, asStoreError);
}
