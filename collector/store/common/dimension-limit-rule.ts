import { type AttributeSpec, OVERFLOW_VALUE, REQUEST_ATTRIBUTES } from '../../../contract/index.js';
import type { SeriesDims } from '../../model/batches.js';

/** The sender-controlled string dimensions of a series (the extension id has a limit of its own). */
const BOUNDED = (REQUEST_ATTRIBUTES as readonly AttributeSpec[])
  .filter((attribute) => attribute.sender === true && attribute.type === 'string')
  .map((attribute) => ({
    key: attribute.key as Exclude<keyof SeriesDims, 'kind'>,
    column: attribute.column,
  }));

/** The columns of the bounded dimensions: retention frees the values no series keeps any more. */
export const BOUNDED_DIMENSIONS: readonly string[] = BOUNDED.map((bounded) => bounded.column);

/** A value of a bounded dimension, as `dimension_values` keys it. */
export interface DimensionValue {
  dimension: string;
  value: string;
}

/** The values of `dims` the limit decides on: its sender-controlled strings, `_OTHER` aside. */
export function boundedValues(dims: Readonly<SeriesDims>): DimensionValue[] {
  const values: DimensionValue[] = [];
  for (const { key, column } of BOUNDED) {
    const value = dims[key];
    if (typeof value === 'string' && value !== OVERFLOW_VALUE) values.push({ dimension: column, value });
  }
  return values;
}

const memo = (dimension: string, value: string): string => `${dimension}\u0000${value}`;

/**
 * What the dimension limit knows, loaded by a dialect for the values it asks about: which values are stored, and
 * how many each dimension holds (at least for the dimensions of values not stored). Decisions update it, so that
 * one state serves every series of an apply.
 */
export class DimensionState {
  private readonly known = new Set<string>();
  private readonly counts = new Map<string, number>();

  knownValue(dimension: string, value: string): void {
    this.known.add(memo(dimension, value));
  }

  has(dimension: string, value: string): boolean {
    return this.known.has(memo(dimension, value));
  }

  count(dimension: string, count: number): void {
    this.counts.set(dimension, count);
  }

  hasCount(dimension: string): boolean {
    return this.counts.has(dimension);
  }

  /**
   * The limit: a value not stored yet is admitted while its dimension holds fewer than `maxValues`, and becomes
   * `_OTHER` once it is full. Returns the dimensions as stored (the same object when nothing changed), the values
   * to add to `dimension_values`, and how many values went to `_OTHER`.
   */
  limit(dims: Readonly<SeriesDims>, maxValues: number): { dims: Readonly<SeriesDims>; admitted: DimensionValue[]; overflowed: number } {
    let out: SeriesDims | undefined;
    const admitted: DimensionValue[] = [];
    let overflowed = 0;
    for (const { key, column } of BOUNDED) {
      const value = dims[key];
      if (typeof value !== 'string' || value === OVERFLOW_VALUE || this.has(column, value)) continue;
      const count = this.counts.get(column) ?? 0;
      if (count < maxValues) {
        this.counts.set(column, count + 1);
        this.knownValue(column, value);
        admitted.push({ dimension: column, value });
        continue;
      }
      out ??= { ...dims };
      (out as Record<string, unknown>)[key] = OVERFLOW_VALUE;
      overflowed++;
    }
    return { dims: out ?? dims, admitted, overflowed };
  }
}
