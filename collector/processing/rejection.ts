/**
 * An export refused as a whole: nothing of it is stored and the sender is told why (HTTP 400). Raised for
 * input that breaks the contract in a way retrying cannot fix: impossible values, oversized strings, points
 * from the far future, too many distinct extension ids.
 */
export class ExportRejection extends Error {
  override readonly name = 'ExportRejection';

  constructor(
    message: string,
    /** A short label for the collector's own metrics (`reason` label). */
    readonly reason: string,
  ) {
    super(message);
  }
}
