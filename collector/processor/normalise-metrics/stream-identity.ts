import { createHash } from 'node:crypto';
import type { AnyValue, KeyValue } from '../../otlp/messages.js';
import { canonicalValue } from '../../otlp/values.js';

type Typed = string | boolean | null | [string, string];

/** A value as it takes part in an identity: strings and booleans as themselves, anything else tagged by kind. */
function typed(value: AnyValue | null | undefined): Typed {
  if (value === null || value === undefined) return null;
  if (typeof value.stringValue === 'string') return value.stringValue;
  if (typeof value.boolValue === 'boolean') return value.boolValue;
  return ['v', canonicalValue(value)];
}

interface Shape {
  /** Attribute names in the order the sender listed them. */
  names: string[];
  /** Indexes of the attributes in sorted-name order. */
  order: number[];
  /** 16 base64url digits of SHA-256 over the sorted names as JSON: which names, never how they were ordered. */
  tag: string;
}

/**
 * The identity of a point's attributes, by name: one JSON array of the set of names (as a digest of their
 * sorted JSON list), then the values in sorted-name order, typed (the string "1", the integer 1 and `true`
 * differ, as OTLP says they do). The order the sender used does not matter; an attribute added to some
 * streams changes only theirs. Stored (hashed) in every stream key: never change the format.
 *
 * Points of one metric nearly always list the same names in the same order, so the sort and the digest are
 * done once per such run and reused while the names repeat; per point only the values are written out.
 */
export class StreamIdentity {
  private last: Shape = { names: [], order: [], tag: StreamIdentity.tagOf([]) };

  private static tagOf(sortedNames: readonly string[]): string {
    return createHash('sha256').update(JSON.stringify(sortedNames)).digest('base64url').slice(0, 16);
  }

  of(attributes: readonly KeyValue[]): string {
    const shape = this.shape(attributes);
    // The tag first, in the same array: one flat string, built by one call.
    const parts: Typed[] = new Array(shape.order.length + 1);
    parts[0] = shape.tag;
    for (let i = 0; i < shape.order.length; i++) parts[i + 1] = typed(attributes[shape.order[i] as number]?.value);
    return JSON.stringify(parts);
  }

  private shape(attributes: readonly KeyValue[]): Shape {
    const last = this.last;
    if (last.names.length === attributes.length) {
      let same = true;
      for (let i = 0; i < attributes.length; i++) {
        if (last.names[i] !== (attributes[i]?.key ?? '')) {
          same = false;
          break;
        }
      }
      if (same) return last;
    }
    const names = attributes.map((attribute) => attribute.key ?? '');
    // Stable: equal names (which OTLP forbids) keep the sender's order.
    const order = names
      .map((_, index) => index)
      .sort((a, b) => {
        const x = names[a] as string;
        const y = names[b] as string;
        return x < y ? -1 : x > y ? 1 : a - b;
      });
    this.last = { names, order, tag: StreamIdentity.tagOf(order.map((index) => names[index] as string)) };
    return this.last;
  }
}
