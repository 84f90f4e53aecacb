/** Readers for untrusted JSON values (client input, or what an SDK passes on unvalidated): they narrow, never throw. */

/** A JSON object (not an array, not null), or `undefined`. */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
