import { MS_PER_DAY, MS_PER_HOUR } from '../../model/time.js';
import { FoldFirstReader } from '../common/fold-first-reader.js';
import type { RollupReader } from '../store.js';
import { asStoreError, storeRead } from './connection.js';
import type { PostgresCore } from './core.js';
import { readExamples } from './readers/examples.js';
import { readInstances } from './readers/instances.js';
import { RollupsReader } from './readers/rollups.js';
import { TrendsReader } from './readers/trends.js';

/** A matrix over more than two days is answered in whole hours. */
const HOURLY_ABOVE_MS = 2 * MS_PER_DAY;

/**
 * The reads, behind the fold-first reader: every read of the rollups first folds what any replica acknowledged
 * (waiting for another replica's fold, or a lock on `pending_increments`, at most `lock_timeout`).
 */
export function postgresReader(core: PostgresCore): RollupReader {
  const { clock, retention } = core.options;
  const rollups = new RollupsReader(core.pool, () => ({
    minuteHorizonMs: clock() - retention.minuteDays * MS_PER_DAY + MS_PER_HOUR,
    hourlyAboveMs: HOURLY_ABOVE_MS,
  }));
  const rows = {
    instances: (query: Parameters<RollupReader['instances']>[0]) => storeRead(() => core.snapshot((db) => readInstances(db, query))),
    examples: (query: Parameters<RollupReader['examples']>[0]) => storeRead(() => readExamples(core.pool, query)),
  };
  return new FoldFirstReader(core.fold, rollups, new TrendsReader(core.pool), rows, asStoreError);
}
