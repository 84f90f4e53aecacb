import { type AttributeSpec, OVERFLOW_VALUE, REQUEST_ATTRIBUTES } from '../../../../contract/index.js';
import type { SeriesDims } from '../../../model/batches.js';
import type { Queryable } from '../connection.js';

/** The sender-controlled string dimensions of a series (the extension id has a limit of its own). */
const BOUNDED = (REQUEST_ATTRIBUTES as readonly AttributeSpec[]).filter((attribute) => attribute.sender === true && attribute.type === 'string').map((attribute) => ({
  key: attribute.key as Exclude<keyof SeriesDims, 'kind'>,
  column: attribute.column,
}));

/**
 * Takes the transaction-scoped lock under which new streams, series, cells and dimension values are created.
 * Counting a dimension's values and adding one must not interleave between replicas (both would see room for
 * the last value); and creating identities one transaction at a time means two exports never wait on each
 * other's half-created rows in opposite orders. Taken only by exports that bring a stream not seen before.
 */
export async function lockIdentityCreation(db: Queryable): Promise<void> {
  await db.query("SELECT pg_advisory_xact_lock(hashtextextended('extscope:identities', 0))");
}

/**
 * Bounds the distinct values of every sender-controlled dimension (`dimension_values`), as the SQLite store
 * does: a new value once its dimension holds `maxValues` is stored as `_OTHER`, and counted. Runs inside the
 * apply transaction, under {@link lockIdentityCreation}, only for series not seen before.
 */
export class DimensionLimit {
  /** Values folded into `_OTHER` by this collector since start (for /metrics). */
  overflowed = 0;

  constructor(private readonly maxValues: number) {}

  /** `kept`: values this transaction already found or added (under the lock, they stay so until it commits). */
  async apply(db: Queryable, dims: Readonly<SeriesDims>, kept: Set<string>): Promise<Readonly<SeriesDims>> {
    let out: SeriesDims | undefined;
    for (const { key, column } of BOUNDED) {
      const value = dims[key];
      if (typeof value !== 'string' || value === OVERFLOW_VALUE) continue;
      const memo = `${column}\u0000${value}`;
      if (kept.has(memo)) continue;
      const known = await db.query('SELECT 1 FROM dimension_values WHERE dimension = $1 AND value = $2', [column, value]);
      if (known.rowCount !== 0) {
        kept.add(memo);
        continue;
      }
      const { rows } = await db.query<{ n: number }>('SELECT count(*)::bigint AS n FROM dimension_values WHERE dimension = $1', [column]);
      if ((rows[0]?.n ?? 0) < this.maxValues) {
        await db.query('INSERT INTO dimension_values (dimension, value) VALUES ($1, $2) ON CONFLICT DO NOTHING', [column, value]);
        kept.add(memo);
        continue;
      }
      out ??= { ...dims };
      (out as Record<string, unknown>)[key] = OVERFLOW_VALUE;
      this.overflowed++;
    }
    return out ?? dims;
  }
}
