/**
 * Array parameters in PostgreSQL's binary format (what `array_send` writes and `array_recv` reads): node-postgres
 * sends a Buffer parameter as binary, so an array encoded here reaches the server as it is, where a JS array would be
 * written as an array literal (every element escaped and quoted, a byte string in hex) and parsed back by the server.
 * An export binds a few hundred values; as literals they were a fair share of the collector's and the server's CPU.
 *
 * The layout: the number of dimensions (0 for an empty array, else 1), whether any element is null, the element
 * type's OID, the length and lower bound (1), then each element as its byte length (−1: null) and its bytes.
 */

/** The element types an array parameter can be sent as, by the name its cast gives (`@name::bigint[]`). */
export const BINARY_ELEMENT_TYPES = {
  bigint: 20,
  smallint: 21,
  integer: 23,
  text: 25,
  bytea: 17,
} as const;

export type BinaryElementType = keyof typeof BINARY_ELEMENT_TYPES;

const HEADER = 20;
const TWO_32 = 4_294_967_296;

/**
 * `values` as a binary array of `type`: numbers, bigints or decimal strings for the integer types; strings for text;
 * Buffers for bytea; null or undefined for NULL. One writer per kind of element, each looping by index over one
 * kind of value (no iterator, no value boxed): an export's arrays are encoded at every export.
 */
export function binaryArray(type: BinaryElementType, values: readonly unknown[]): Buffer {
  switch (type) {
    case 'bigint':
      return int8Array(values);
    case 'integer':
    case 'smallint':
      return smallIntegerArray(values, type);
    case 'text':
    case 'bytea':
      return bytesArray(values, type);
  }
}

/** The buffer for an array of `count` elements taking `bytes` after their length words, its header written. */
function allocate(type: BinaryElementType, count: number, nulls: boolean, bytes: number): { buffer: Buffer; view: DataView } {
  const buffer = Buffer.allocUnsafe((count === 0 ? 12 : HEADER) + 4 * count + bytes);
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.length);
  view.setInt32(0, count === 0 ? 0 : 1);
  view.setInt32(4, nulls ? 1 : 0);
  view.setInt32(8, BINARY_ELEMENT_TYPES[type]);
  if (count > 0) {
    view.setInt32(12, count);
    view.setInt32(16, 1);
  }
  return { buffer, view };
}

function nullCount(values: readonly unknown[]): number {
  let nulls = 0;
  for (let index = 0; index < values.length; index++) if (values[index] === null || values[index] === undefined) nulls++;
  return nulls;
}

function int8Array(values: readonly unknown[]): Buffer {
  const nulls = nullCount(values);
  const { buffer, view } = allocate('bigint', values.length, nulls > 0, 8 * (values.length - nulls));
  let offset = HEADER;
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    if (value === null || value === undefined) {
      view.setInt32(offset, -1);
      offset += 4;
      continue;
    }
    view.setInt32(offset, 8);
    if (typeof value === 'number') {
      // In two halves: no BigInt made per value.
      if (!Number.isSafeInteger(value)) throw new TypeError(`not an integer: ${value}`);
      view.setInt32(offset + 4, Math.floor(value / TWO_32));
      view.setUint32(offset + 8, value >>> 0);
    } else view.setBigInt64(offset + 4, typeof value === 'bigint' ? value : BigInt(value as string));
    offset += 12;
  }
  return buffer;
}

function smallIntegerArray(values: readonly unknown[], type: 'integer' | 'smallint'): Buffer {
  const width = type === 'integer' ? 4 : 2;
  const nulls = nullCount(values);
  const { buffer, view } = allocate(type, values.length, nulls > 0, width * (values.length - nulls));
  let offset = HEADER;
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    if (value === null || value === undefined) {
      view.setInt32(offset, -1);
      offset += 4;
      continue;
    }
    const number = typeof value === 'number' ? value : Number(value);
    if (!Number.isSafeInteger(number)) throw new TypeError(`not an integer: ${String(value)}`);
    view.setInt32(offset, width);
    if (width === 4) view.setInt32(offset + 4, number);
    else view.setInt16(offset + 4, number);
    offset += 4 + width;
  }
  return buffer;
}

/** Text (strings, as UTF-8) or bytea (Buffers): each element its byte length and its bytes. */
function bytesArray(values: readonly unknown[], type: 'text' | 'bytea'): Buffer {
  const text = type === 'text';
  let nulls = 0;
  let bytes = 0;
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    if (value === null || value === undefined) nulls++;
    else bytes += text ? Buffer.byteLength(value as string) : (value as Buffer).length;
  }
  const { buffer, view } = allocate(type, values.length, nulls > 0, bytes);
  let offset = HEADER;
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    if (value === null || value === undefined) {
      view.setInt32(offset, -1);
      offset += 4;
      continue;
    }
    const length = text ? buffer.write(value as string, offset + 4) : (value as Buffer).copy(buffer, offset + 4);
    view.setInt32(offset, length);
    offset += 4 + length;
  }
  return buffer;
}
