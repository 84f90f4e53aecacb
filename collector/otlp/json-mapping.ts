/**
 * OTLP/JSON is the proto3 JSON mapping with a few OTLP-specific rules: trace and span ids are hex (not base64),
 * 64-bit integers may be strings or numbers, enums are integers. protobufjs' `fromObject` knows the proto3
 * mapping but is lenient where we must not be ("abc" as a timestamp silently becomes 0), so this pass checks
 * the scalar fields extscope relies on and rewrites hex ids into what `fromObject` expects, in place.
 */

export class JsonMappingError extends Error {
  override readonly name = 'JsonMappingError';
}

/** fixed64/uint64 fields (timestamps, histogram counts): 0 ≤ value < 2^64. */
const UINT64_FIELDS = new Set(['timeUnixNano', 'startTimeUnixNano', 'endTimeUnixNano', 'count']);
/** int64 fields (integer points and attribute values): -2^63 ≤ value < 2^63. */
const INT64_FIELDS = new Set(['asInt', 'intValue']);
const UINT64_MAX = (1n << 64n) - 1n;
const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const DOUBLE_FIELDS = new Set(['asDouble', 'doubleValue']);
const HEX_ID_BYTES: Record<string, number> = { traceId: 16, spanId: 8, parentSpanId: 8 };
const MAX_DEPTH = 64;
const INTEGER_STRING = /^-?\d{1,20}$/;
const HEX = /^[0-9a-fA-F]*$/;

function fail(path: string, message: string): never {
  throw new JsonMappingError(`${path}: ${message}`);
}

/**
 * A 64-bit integer, as a number or a decimal string, within its type's range. protobufjs' `fromObject` would
 * keep only the low 64 bits of a larger one (2^64 + 5 becomes 5), so an out-of-range value is refused here.
 */
function checkInt64(value: unknown, path: string, unsigned: boolean): void {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) fail(path, 'a 64-bit integer must be a whole number (as a string when beyond 2^53)');
  } else if (typeof value !== 'string' || !INTEGER_STRING.test(value)) {
    fail(path, 'expected a 64-bit integer as a decimal string or number');
  }
  const integer = BigInt(value);
  if (unsigned ? integer < 0n || integer > UINT64_MAX : integer < INT64_MIN || integer > INT64_MAX) {
    fail(path, `${String(value)} is outside the range of ${unsigned ? 'an unsigned' : 'a signed'} 64-bit integer`);
  }
}

function checkDouble(value: unknown, path: string): void {
  if (typeof value === 'number') return;
  // proto3 JSON spells the non-finite doubles as strings; they are accepted here and refused later as values.
  if (value === 'NaN' || value === 'Infinity' || value === '-Infinity') return;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return;
  fail(path, 'expected a number');
}

function hexToBase64(value: unknown, bytes: number, path: string): string {
  if (typeof value !== 'string' || !HEX.test(value) || (value.length !== 0 && value.length !== bytes * 2)) {
    fail(path, `expected ${bytes * 2} hex digits`);
  }
  return Buffer.from(value, 'hex').toString('base64');
}

function walk(node: unknown, depth: number, path: string): void {
  if (depth > MAX_DEPTH) fail(path, 'nested too deeply');
  if (Array.isArray(node)) {
    for (let index = 0; index < node.length; index++) walk(node[index], depth + 1, `${path}[${index}]`);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const record = node as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const value = record[key];
    if (value === null || value === undefined) continue;
    if (UINT64_FIELDS.has(key)) checkInt64(value, `${path}.${key}`, true);
    else if (INT64_FIELDS.has(key)) checkInt64(value, `${path}.${key}`, false);
    else if (DOUBLE_FIELDS.has(key)) checkDouble(value, `${path}.${key}`);
    else if (key in HEX_ID_BYTES) record[key] = hexToBase64(value, HEX_ID_BYTES[key] ?? 0, `${path}.${key}`);
    else if (typeof value === 'object') walk(value, depth + 1, `${path}.${key}`);
  }
}

/** Parses an OTLP/JSON body into a plain object ready for the generated `fromObject`. */
export function parseOtlpJson(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new JsonMappingError(`invalid JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new JsonMappingError('the body must be a JSON object (an OTLP export request)');
  }
  walk(parsed, 0, '$');
  return parsed as Record<string, unknown>;
}
