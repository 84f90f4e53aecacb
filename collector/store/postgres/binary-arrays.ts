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

/** `values` as a binary array of `type` (numbers, bigints or decimal strings for the integer types; strings for text; Buffers for bytea). */
export function binaryArray(type: BinaryElementType, values: readonly unknown[]): Buffer {
  const width = type === 'bigint' ? 8 : type === 'integer' ? 4 : type === 'smallint' ? 2 : 0;
  let size = values.length === 0 ? 12 : HEADER;
  let nulls = 0;
  for (const value of values) {
    if (value === null || value === undefined) {
      nulls = 1;
      size += 4;
    } else size += 4 + (width > 0 ? width : type === 'text' ? Buffer.byteLength(value as string) : (value as Buffer).length);
  }
  const buffer = Buffer.allocUnsafe(size);
  buffer.writeInt32BE(values.length === 0 ? 0 : 1, 0);
  buffer.writeInt32BE(nulls, 4);
  buffer.writeInt32BE(BINARY_ELEMENT_TYPES[type], 8);
  if (values.length === 0) return buffer;
  buffer.writeInt32BE(values.length, 12);
  buffer.writeInt32BE(1, 16);
  let offset = HEADER;
  for (const value of values) {
    if (value === null || value === undefined) {
      offset = buffer.writeInt32BE(-1, offset);
    } else if (width === 8) {
      offset = buffer.writeInt32BE(8, offset);
      offset = writeInt64(buffer, value, offset);
    } else if (width > 0) {
      offset = buffer.writeInt32BE(width, offset);
      const number = integer(value);
      offset = width === 4 ? buffer.writeInt32BE(number, offset) : buffer.writeInt16BE(number, offset);
    } else if (type === 'text') {
      const length = buffer.write(value as string, offset + 4, 'utf8');
      buffer.writeInt32BE(length, offset);
      offset += 4 + length;
    } else {
      const bytes = value as Buffer;
      offset = buffer.writeInt32BE(bytes.length, offset);
      offset += bytes.copy(buffer, offset);
    }
  }
  return buffer;
}

/** A 64-bit integer, big-endian: a safe-integer number in two halves (no BigInt made per value), else as a BigInt. */
function writeInt64(buffer: Buffer, value: unknown, offset: number): number {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new TypeError(`not an integer: ${value}`);
    buffer.writeInt32BE(Math.floor(value / TWO_32), offset);
    return buffer.writeUInt32BE(value >>> 0, offset + 4);
  }
  return buffer.writeBigInt64BE(typeof value === 'bigint' ? value : BigInt(value as string), offset);
}

function integer(value: unknown): number {
  const number = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(number)) throw new TypeError(`not an integer: ${String(value)}`);
  return number;
}
