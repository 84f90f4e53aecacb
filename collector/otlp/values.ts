import type { AnyValue, Int64, KeyValue, LongLike } from '../otlp/messages.js';

/**
 * Reading OTLP scalars. Timestamps are kept as exact bigint nanoseconds (they identify points); counts must be
 * whole numbers below 2^53, which any real request count is.
 */

const TWO_32 = 4_294_967_296;

function isLong(value: unknown): value is LongLike {
  return typeof value === 'object' && value !== null && typeof (value as LongLike).low === 'number';
}

/** A fixed64 timestamp as bigint nanoseconds; `undefined` when absent. */
export function unsignedNanos(value: Int64): bigint | undefined {
  if (value === null || value === undefined) return undefined;
  if (isLong(value)) return (BigInt(value.high >>> 0) << 32n) | BigInt(value.low >>> 0);
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? BigInt(value) : -1n;
  return /^\d+$/.test(value) ? BigInt(value) : -1n;
}

/** A signed int64 as a number, or NaN when it is not exactly representable. */
export function signedInteger(value: Int64): number {
  if (value === null || value === undefined) return Number.NaN;
  if (isLong(value)) {
    const result = value.high * TWO_32 + (value.low >>> 0);
    return Number.isSafeInteger(result) ? result : Number.NaN;
  }
  const result = typeof value === 'number' ? value : Number(value);
  return Number.isSafeInteger(result) ? result : Number.NaN;
}

/** The string form of a scalar attribute value (ints as decimal), or undefined for other kinds. */
export function scalarString(value: AnyValue | null | undefined): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value.stringValue === 'string') return value.stringValue;
  if (value.intValue !== null && value.intValue !== undefined) {
    const number = signedInteger(value.intValue);
    return Number.isNaN(number) ? undefined : String(number);
  }
  return undefined;
}

/** A boolean attribute; senders that only have strings may send "true"/"false". */
export function scalarBoolean(value: AnyValue | null | undefined): boolean | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value.boolValue === 'boolean') return value.boolValue;
  if (value.stringValue === 'true') return true;
  if (value.stringValue === 'false') return false;
  return undefined;
}

/** String array attribute (span attributes such as `extscope.client.extensions`). */
export function stringArray(value: AnyValue | null | undefined): string[] | undefined {
  const values = value?.arrayValue?.values;
  if (values === null || values === undefined) return undefined;
  const result: string[] = [];
  for (const item of values) {
    if (typeof item?.stringValue === 'string') result.push(item.stringValue);
  }
  return result;
}

/**
 * A canonical text of any attribute value, for identities only (never shown, never parsed back). The kind is
 * part of it, so the string "1" and the integer 1 stay different streams, as OTLP says they are.
 */
export function canonicalValue(value: AnyValue | null | undefined, depth = 0): string {
  if (value === null || value === undefined || depth > 16) return 'n';
  if (typeof value.stringValue === 'string') return `s${JSON.stringify(value.stringValue)}`;
  if (typeof value.boolValue === 'boolean') return value.boolValue ? 'T' : 'F';
  if (value.intValue !== null && value.intValue !== undefined) {
    const bits = isLong(value.intValue) ? `${value.intValue.high}:${value.intValue.low}` : String(value.intValue);
    return `i${bits}`;
  }
  if (typeof value.doubleValue === 'number') return `d${String(value.doubleValue)}`;
  if (value.bytesValue !== null && value.bytesValue !== undefined) return `b${Buffer.from(value.bytesValue).toString('base64')}`;
  if (value.arrayValue) return `[${(value.arrayValue.values ?? []).map((item) => canonicalValue(item, depth + 1)).join(',')}]`;
  if (value.kvlistValue) return `{${canonicalAttributes(value.kvlistValue.values ?? [], depth + 1)}}`;
  return 'n';
}

/** Attributes as canonical text, independent of their order. */
export function canonicalAttributes(attributes: readonly KeyValue[], depth = 0): string {
  const pairs = attributes.map((attribute) => `${JSON.stringify(attribute.key ?? '')}=${canonicalValue(attribute.value, depth)}`);
  pairs.sort();
  return pairs.join(',');
}
