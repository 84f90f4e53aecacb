import { createHash } from 'node:crypto';
import { DECLARATION, type Declaration, isValidExtensionId } from '../../contract/index.js';
import { asRecord } from './untrusted.js';

/** Caps on one side's declaration (client input): see `maxIdsPerRequest` and `maxIdLength` of the config. */
export interface ExtensionMapLimits {
  maxIds: number;
  maxIdLength: number;
}

/** What one side declared, reduced to what may leave the process: valid ids and a count of the rest. */
export interface DeclaredExtensions {
  declaration: Declaration;
  /** Valid ids in declaration order, at most `maxIds`. */
  ids: string[];
  /** The raw settings objects, index-aligned with `ids`; read only to fingerprint (or, opted in, export). */
  settings: unknown[];
  invalid: number;
  dropped: number;
}

export const UNKNOWN_DECLARATION: DeclaredExtensions = Object.freeze({
  declaration: DECLARATION.unknown,
  ids: [],
  settings: [],
  invalid: 0,
  dropped: 0,
}) as DeclaredExtensions;

const NONE_DECLARATION: DeclaredExtensions = Object.freeze({
  declaration: DECLARATION.none,
  ids: [],
  settings: [],
  invalid: 0,
  dropped: 0,
}) as DeclaredExtensions;

/**
 * The last declaration read that a later map may repeat: a client sends the same map on every request, and
 * handing back the same object spares the allocations and lets the recorder see the repeat by identity.
 * Where settings are read (spans fingerprint them), only a declaration of valid ids with empty settings (`{}`, by
 * far the most common) is kept, so the reuse never stands in for different settings; where nothing reads them,
 * any declaration of valid ids is, and a repeat is known by its ids alone (the settings of the declaration handed
 * back are then those of the first map, unread).
 */
export interface DeclarationMemo {
  last: DeclaredExtensions | undefined;
  readonly settingsRead: boolean;
}

/**
 * Reads `capabilities.extensions` from an untrusted capabilities value.
 * `undefined`/non-object capabilities mean nothing was received (`unknown`); an absent or empty map is `none`.
 * A map whose keys are all invalid is still `declared`: the client did declare something, we just cannot
 * name it (it is counted in the invalid bucket). A declaration is never modified once read (it may be shared).
 */
export function readDeclaredExtensions(capabilities: unknown, limits: ExtensionMapLimits, memo?: DeclarationMemo): DeclaredExtensions {
  const record = asRecord(capabilities);
  if (record === undefined) return UNKNOWN_DECLARATION;
  const map = asRecord(record['extensions']);
  if (map === undefined) return NONE_DECLARATION;
  const last = memo?.last;
  if (memo !== undefined && last !== undefined && repeats(map, last.ids, memo.settingsRead)) return last;
  const ids: string[] = [];
  const settings: unknown[] = [];
  let invalid = 0;
  let dropped = 0;
  let emptySettings = true;
  for (const id in map) {
    if (!Object.prototype.hasOwnProperty.call(map, id)) continue;
    if (ids.length >= limits.maxIds) dropped++;
    else if (!isValidExtensionId(id, limits.maxIdLength)) invalid++;
    else {
      ids.push(id);
      settings.push(map[id]);
      if (emptySettings && !isEmptyRecord(map[id])) emptySettings = false;
    }
  }
  if (ids.length === 0 && invalid === 0 && dropped === 0) return NONE_DECLARATION;
  const read: DeclaredExtensions = { declaration: DECLARATION.declared, ids, settings, invalid, dropped };
  if (memo !== undefined && (emptySettings || !memo.settingsRead) && invalid === 0 && dropped === 0) memo.last = read;
  return read;
}

/** Whether `map` holds exactly `ids`, in that order (each with empty settings, if `requireEmptySettings`). */
function repeats(map: Record<string, unknown>, ids: readonly string[], requireEmptySettings: boolean): boolean {
  let index = 0;
  for (const id in map) {
    if (index >= ids.length || id !== ids[index] || !Object.prototype.hasOwnProperty.call(map, id) || (requireEmptySettings && !isEmptyRecord(map[id])))
      return false;
    index++;
  }
  return index === ids.length;
}

function isEmptyRecord(value: unknown): boolean {
  const record = asRecord(value);
  return record !== undefined && isEmpty(record);
}

/** Keys of `error.data.requiredCapabilities.extensions` in a -32021 answer. */
export function readRequiredExtensionIds(errorData: unknown, limits: ExtensionMapLimits): DeclaredExtensions {
  const data = asRecord(errorData);
  if (data === undefined) return UNKNOWN_DECLARATION;
  return readDeclaredExtensions(data['requiredCapabilities'], limits);
}

const MAX_FINGERPRINT_NODES = 10_000;
const MAX_FINGERPRINT_DEPTH = 32;

/**
 * Canonical JSON (object keys sorted, recursively) so the same settings always give the same fingerprint.
 * Bounded: hostile settings (deep or huge) are cut off and marked, never walked without limit.
 */
export function canonicalJson(value: unknown): string {
  let budget = MAX_FINGERPRINT_NODES;
  const walk = (node: unknown, depth: number): string => {
    if (--budget < 0 || depth > MAX_FINGERPRINT_DEPTH) return '"\u2026truncated"';
    if (node === null || typeof node !== 'object') {
      const json = JSON.stringify(node);
      return json === undefined ? 'null' : json;
    }
    if (Array.isArray(node)) return `[${node.map((item) => walk(item, depth + 1)).join(',')}]`;
    const record = node as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${walk(record[key], depth + 1)}`).join(',')}}`;
  };
  return walk(value, 0);
}

function isEmpty(record: Record<string, unknown>): boolean {
  for (const _ in record) return false;
  return true;
}

/** `{}` — "supported, no settings" — is by far the most common value. */
const EMPTY_FINGERPRINT = createHash('sha256').update('{}').digest('hex').slice(0, 16);
const FINGERPRINT_MEMO_SIZE = 4096;
const MAX_MEMO_KEY_LENGTH = 1024;
const fingerprintMemo = new Map<string, string>();

/** A short, stable fingerprint of a settings object: 16 hex digits of SHA-256 over its canonical JSON. */
export function fingerprint(settings: unknown): string {
  const record = asRecord(settings);
  if (record !== undefined && isEmpty(record)) return EMPTY_FINGERPRINT;
  // Clients repeat the same few settings on every request: hash each distinct canonical form once.
  const canonical = canonicalJson(settings);
  let digest = fingerprintMemo.get(canonical);
  if (digest === undefined) {
    digest = createHash('sha256').update(canonical).digest('hex').slice(0, 16);
    if (canonical.length <= MAX_MEMO_KEY_LENGTH) {
      if (fingerprintMemo.size >= FINGERPRINT_MEMO_SIZE) fingerprintMemo.clear();
      fingerprintMemo.set(canonical, digest);
    }
  }
  return digest;
}
