import { INVALID_EXTENSION_ID, OVERFLOW_VALUE } from './values.js';

/**
 * The one rule: an extension is negotiated for a request when both the client and the server declared it.
 * Nothing is negotiated under an id nobody can name (the `_invalid` bucket).
 */
export function isNegotiated(id: string, clientDeclared: boolean, serverDeclared: boolean): boolean {
  return clientDeclared && serverDeclared && id !== INVALID_EXTENSION_ID;
}

/** Ids present in both maps, in the client's declaration order. */
export function intersect(clientIds: readonly string[], serverIds: ReadonlySet<string>): string[] {
  const negotiated: string[] = [];
  for (const id of clientIds) if (serverIds.has(id)) negotiated.push(id);
  return negotiated;
}

/** The two pseudo-ids (invalid ids, cardinality overflow): shown after every real id. */
export function isPseudoExtensionId(id: string): boolean {
  return id === INVALID_EXTENSION_ID || id === OVERFLOW_VALUE;
}
