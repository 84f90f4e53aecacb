import type { SeriesDims } from '../../../model/batches.js';
import { type DimensionValue, DimensionState, boundedValues } from '../../common/dimension-limit-rule.js';
import type { Queryable } from '../connection.js';

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
 * Loads what the dimension limit (common/dimension-limit-rule.ts) needs for an export's new series, in two
 * statements, and stores the values it admits in one. Runs inside the apply transaction, under
 * {@link lockIdentityCreation}.
 */
export class DimensionLimit {
  /** Values folded into `_OTHER` by this collector since start (for /metrics). */
  overflowed = 0;

  constructor(private readonly maxValues: number) {}

  /** The dimensions as stored of each of `list`, in order. */
  async apply(db: Queryable, list: readonly Readonly<SeriesDims>[]): Promise<Readonly<SeriesDims>[]> {
    const wanted = new Map<string, DimensionValue>();
    for (const dims of list) for (const entry of boundedValues(dims)) wanted.set(`${entry.dimension}\u0000${entry.value}`, entry);
    if (wanted.size === 0) return [...list];
    const state = new DimensionState();
    const values = [...wanted.values()];
    const { rows: known } = await db.query<DimensionValue>(
      'SELECT d.dimension, d.value FROM dimension_values d JOIN unnest($1::text[], $2::text[]) AS k (dimension, value) ON d.dimension = k.dimension AND d.value = k.value',
      [values.map((entry) => entry.dimension), values.map((entry) => entry.value)],
    );
    for (const row of known) state.knownValue(row.dimension, row.value);
    const unknown = [...new Set(values.filter((entry) => !state.has(entry.dimension, entry.value)).map((entry) => entry.dimension))];
    if (unknown.length > 0) {
      const { rows: counts } = await db.query<{ dimension: string; n: number }>(
        'SELECT dimension, count(*)::bigint AS n FROM dimension_values WHERE dimension = ANY($1::text[]) GROUP BY dimension',
        [unknown],
      );
      for (const row of counts) state.count(row.dimension, Number(row.n));
    }
    const admitted: DimensionValue[] = [];
    const stored = list.map((dims) => {
      const limited = state.limit(dims, this.maxValues);
      admitted.push(...limited.admitted);
      this.overflowed += limited.overflowed;
      return limited.dims;
    });
    if (admitted.length > 0) {
      await db.query('INSERT INTO dimension_values (dimension, value) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT DO NOTHING', [
        admitted.map((entry) => entry.dimension),
        admitted.map((entry) => entry.value),
      ]);
    }
    return stored;
  }
}
