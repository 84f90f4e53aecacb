import type { SeriesDims } from '../../../model/batches.js';
import { type DimensionValue, DimensionState, boundedValues } from '../../common/dimension-limit-rule.js';
import type { Queryable } from '../connection.js';

/**
 * Loads what the dimension limit (common/dimension-limit-rule.ts) needs for an export's new series and stores the
 * values it admits. Values already listed need nothing more; a dimension with a value not listed is decided under a
 * transaction-scoped lock of that dimension alone (counting its values and adding one must not interleave between
 * replicas, or both would see room for the last value), the locks taken in dimension order.
 */
export class DimensionLimit {
  /** Values folded into `_OTHER` by this collector since start (for /metrics). */
  overflowed = 0;

  constructor(private readonly maxValues: number) {}

  /** The dimensions as stored of each of `list`, in order. Inside the apply transaction. */
  async apply(db: Queryable, list: readonly Readonly<SeriesDims>[]): Promise<Readonly<SeriesDims>[]> {
    const wanted = new Map<string, DimensionValue>();
    for (const dims of list) for (const entry of boundedValues(dims)) wanted.set(`${entry.dimension}\u0000${entry.value}`, entry);
    if (wanted.size === 0) return [...list];
    const state = new DimensionState();
    const values = [...wanted.values()];
    await this.known(db, state, values);
    const unknown = [...new Set(values.filter((entry) => !state.has(entry.dimension, entry.value)).map((entry) => entry.dimension))].sort();
    if (unknown.length > 0) {
      // Locked in order (unnest keeps the array's), then read again under the locks: another replica may have added some.
      await db.query("SELECT count(pg_advisory_xact_lock(hashtextextended('extscope:dimension:' || d, 0))) FROM unnest($1::text[]) AS d", [unknown]);
      const pending = values.filter((entry) => !state.has(entry.dimension, entry.value));
      const { rows: counts } = await db.query<{ dimension: string; n: number; known: string[] }>(
        `SELECT d.dimension, count(*)::bigint AS n,
           array_agg(d.value) FILTER (WHERE (d.dimension, d.value) IN (SELECT * FROM unnest($2::text[], $3::text[]))) AS known
         FROM dimension_values d WHERE d.dimension = ANY($1::text[]) GROUP BY d.dimension`,
        [unknown, pending.map((entry) => entry.dimension), pending.map((entry) => entry.value)],
      );
      for (const row of counts) {
        for (const value of row.known ?? []) state.knownValue(row.dimension, value);
        state.count(row.dimension, Number(row.n));
      }
    }
    const admitted: DimensionValue[] = [];
    const stored = list.map((dims) => {
      const limited = state.limit(dims, this.maxValues);
      admitted.push(...limited.admitted);
      this.overflowed += limited.overflowed;
      return limited.dims;
    });
    if (admitted.length > 0) {
      await db.query('INSERT INTO dimension_values (dimension, value) SELECT * FROM unnest($1::text[], $2::text[]) ORDER BY 1, 2 ON CONFLICT DO NOTHING', [
        admitted.map((entry) => entry.dimension),
        admitted.map((entry) => entry.value),
      ]);
    }
    return stored;
  }

  private async known(db: Queryable, state: DimensionState, values: readonly DimensionValue[]): Promise<void> {
    const { rows } = await db.query<DimensionValue>(
      'SELECT d.dimension, d.value FROM dimension_values d JOIN unnest($1::text[], $2::text[]) AS k (dimension, value) ON d.dimension = k.dimension AND d.value = k.value',
      [values.map((entry) => entry.dimension), values.map((entry) => entry.value)],
    );
    for (const row of rows) state.knownValue(row.dimension, row.value);
  }
}
