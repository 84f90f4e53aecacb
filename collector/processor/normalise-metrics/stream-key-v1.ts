import type { KeyValue } from '../../otlp/messages.js';
import { canonicalValue, scalarBoolean, scalarString } from '../../otlp/values.js';

/**
 * The stream key of schema version 1, frozen: the contract's attributes by position (these sixteen, in this
 * order; strings first, then flags), then every other attribute sorted. Databases written before schema 2
 * hold streams keyed this way; the normaliser computes it once per stream (its points carry it), and a store
 * looks a stream up by it only when the stream is not found by its current key while such streams remain, and
 * re-keys the row found. Never change this file: it must reproduce old keys exactly.
 */
const SLOTS = [
  'extscope.server.name',
  'extscope.server.version',
  'mcp.method.name',
  'extscope.era',
  'mcp.protocol.version',
  'extscope.client.name',
  'extscope.client.version',
  'extscope.client.declaration',
  'extscope.server.declaration',
  'extscope.outcome',
  'rpc.response.status_code',
  'extscope.extension.id',
  'extscope.extension.client_declared',
  'extscope.extension.server_declared',
  'extscope.extension.negotiated',
  'extscope.extension.required',
] as const;
const SLOT = new Map<string, number>(SLOTS.map((name, index) => [name, index]));
/** Slots below this held strings, the rest booleans. */
const STRING_SLOTS = 12;

/**
 * The attribute part of a schema-1 stream key, for attributes the current normaliser accepted (so every
 * contract attribute has its type). The full key is `streamKey(streamScope, this)`: the scope part did not
 * change. The two formats never coincide: a schema-1 array has sixteen entries with flags (or null) from the
 * thirteenth on, a current one alternates names (always strings) and values, and only schema 1 appends raw NUL.
 */
export function schema1StreamAttributes(attributes: readonly KeyValue[]): string {
  const raw: (string | boolean | undefined)[] = new Array(SLOTS.length);
  const extras: string[] = [];
  for (const attribute of attributes) {
    const key = attribute.key ?? '';
    const slot = SLOT.get(key);
    if (slot === undefined) extras.push(`${JSON.stringify(key)}=${canonicalValue(attribute.value)}`);
    else raw[slot] = slot < STRING_SLOTS ? scalarString(attribute.value) : scalarBoolean(attribute.value);
  }
  return extras.length === 0 ? JSON.stringify(raw) : `${JSON.stringify(raw)}\u0000${extras.sort().join(',')}`;
}
