import { MAX_ATTRIBUTE_LENGTH, OVERFLOW_VALUE } from '../../contract/index.js';

/** Caps a string's length (the contract's attribute value limit by default). */
export function capLength(value: string, maxLength = MAX_ATTRIBUTE_LENGTH): string {
  return value.length > maxLength ? value.slice(0, maxLength) : value;
}

/**
 * Caps how many distinct values one attribute may take in metric streams. Sender-controlled strings (method
 * names, client names, extension ids) would otherwise make metric cardinality, and agent memory, unbounded.
 * The first `limit` distinct values are admitted for the life of the process; later ones become `_OTHER`
 * and are counted through `onOverflow`. Strings are also length-capped first.
 */
export class ValueGuard {
  private readonly admitted = new Set<string>();

  constructor(
    private readonly attribute: string,
    private readonly limit: number,
    private readonly onOverflow: (attribute: string) => void,
    private readonly maxLength = MAX_ATTRIBUTE_LENGTH,
  ) {}

  admit(value: string): string {
    const capped = capLength(value, this.maxLength);
    if (this.admitted.has(capped)) return capped;
    if (this.admitted.size >= this.limit) {
      this.onOverflow(this.attribute);
      return OVERFLOW_VALUE;
    }
    this.admitted.add(capped);
    return capped;
  }
}
