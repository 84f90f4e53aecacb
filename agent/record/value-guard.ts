import { OVERFLOW_VALUE } from '../../contract/index.js';

/**
 * Caps how many distinct values one attribute may take in metric streams. Client-controlled strings (method
 * names, client names, extension ids) would otherwise make metric cardinality, and agent memory, unbounded.
 * The first `limit` distinct values are admitted for the life of the process; later ones become `_OTHER`
 * and are counted through `onOverflow`. Strings are also length-capped first.
 */
export class ValueGuard {
  private readonly admitted = new Set<string>();

  constructor(
    readonly attribute: string,
    private readonly limit: number,
    private readonly maxLength: number,
    private readonly onOverflow: (attribute: string) => void,
  ) {}

  admit(value: string): string {
    const capped = value.length > this.maxLength ? value.slice(0, this.maxLength) : value;
    if (this.admitted.has(capped)) return capped;
    if (this.admitted.size >= this.limit) {
      this.onOverflow(this.attribute);
      return OVERFLOW_VALUE;
    }
    this.admitted.add(capped);
    return capped;
  }

  get size(): number {
    return this.admitted.size;
  }
}

/** Caps a string for span attributes, which are per-request and need a length cap but no cardinality cap. */
export function capLength(value: string, maxLength: number): string {
  return value.length > maxLength ? value.slice(0, maxLength) : value;
}
