import type Database from 'better-sqlite3';
import { type AttributeSpec, OVERFLOW_VALUE, REQUEST_ATTRIBUTES } from '../../../../contract/index.js';
import type { SeriesDims } from '../../../model/batches.js';

/** The sender-controlled string dimensions of a series (the extension id has a limit of its own). */
const BOUNDED = (REQUEST_ATTRIBUTES as readonly AttributeSpec[]).filter((attribute) => attribute.sender === true && attribute.type === 'string').map((attribute) => ({
  key: attribute.key as Exclude<keyof SeriesDims, 'kind'>,
  column: attribute.column,
}));

/**
 * Bounds the distinct values of every sender-controlled dimension (`dimension_values`): a new value once its
 * dimension holds `maxValues` is stored as `_OTHER`, and counted. Runs inside the apply transaction, only for
 * series not seen before; the state is the database's, so a restart or another replica decides the same.
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
    let out: SeriesDims | undefined;
    for (const { key, column } of BOUNDED) {
      const value = dims[key];
      if (typeof value !== 'string' || value === OVERFLOW_VALUE) continue;
      if (this.known.get(column, value) !== undefined) continue;
      if ((this.count.get(column) as number) < this.maxValues) {
        this.insert.run(column, value);
        continue;
      }
      out ??= { ...dims };
      (out as Record<string, unknown>)[key] = OVERFLOW_VALUE;
      this.overflowed++;
    }
    return out ?? dims;
  }
}
