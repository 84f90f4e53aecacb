import { FoldFirstReader } from '../common/fold-first-reader.js';
import { readHorizons } from '../common/windows.js';
import type { RollupReader } from '../store.js';
import { asStoreError, storeRead } from './connection.js';
import type { PostgresCore } from './core.js';
import { readExamples } from './readers/examples.js';
import { readInstances } from './readers/instances.js';
import { RollupsReader } from './readers/rollups.js';
import { TrendsReader } from './readers/trends.js';

/**
 * The reads, behind the fold-first reader: every read of the rollups first folds what any replica acknowledged
 * (waiting for another replica's fold, or a lock on `pending_increments`, at most `lock_timeout`).
 */
export function postgresReader(core: PostgresCore): RollupReader {
  const { clock, retention } = core.options;
  // Without the clock: ranges ending now are read from the minutes (see common/bucket-plan.ts).
  const rollups = new RollupsReader(core.pool, () => {
    const { nowMs: _now, ...horizons } = readHorizons(clock(), retention);
    return horizons;
  });
  const rows = {
    instances: (query: Parameters<RollupReader['instances']>[0]) => storeRead(() => core.snapshot((db) => readInstances(db, query))),
    examples: (query: Parameters<RollupReader['examples']>[0]) => storeRead(() => readExamples(core.pool, query)),
  };
  return new FoldFirstReader(core.fold, rollups, new TrendsReader(core.pool), rows, asStoreError);
}
