/** A share of a whole: null when there is nothing to share (no requests), never a division by zero. */
export function share(part: number, whole: number): number | null {
  return whole === 0 ? null : part / whole;
}
