import type Database from 'better-sqlite3';
import type { SeriesDims } from '../../../model/batches.js';
import { DimensionState, boundedValues } from '../../common/dimension-limit-rule.js';

/**
 * Loads what the dimension limit (common/dimension-limit-rule.ts) needs for a new series and stores the values it
 * admits (`dimension_values`). Runs inside the apply transaction, only for series not seen before; the state is
 * the database's, so a restart decides the same.
 */
export class DimensionLimit {
  private readonly known: Database.Statement;
  private readonly insert: Database.Statement;
  private readonly count: Database.Statement;
  /** Values folded into `_OTHER` since start (for /metrics). */
  overflowed = 0;

  constructor(
    db: Database.Database,
    private readonly maxValues: number,
  ) {
    this.known = db.prepare('SELECT 1 FROM dimension_values WHERE dimension = ? AND value = ?').pluck();
    this.insert = db.prepare('INSERT INTO dimension_values (dimension, value) VALUES (?, ?)');
    this.count = db.prepare('SELECT count(*) FROM dimension_values WHERE dimension = ?').pluck();
  }

  /** The dimensions as stored: unchanged (the same object) when every value is known or still fits. */
  apply(dims: Readonly<SeriesDims>): Readonly<SeriesDims> {
    const state = new DimensionState();
    for (const { dimension, value } of boundedValues(dims)) {
      if (this.known.get(dimension, value) !== undefined) state.knownValue(dimension, value);
      else if (!state.hasCount(dimension)) state.count(dimension, this.count.get(dimension) as number);
    }
    const limited = state.limit(dims, this.maxValues);
    for (const { dimension, value } of limited.admitted) this.insert.run(dimension, value);
    this.overflowed += limited.overflowed;
    return limited.dims;
  }
}
