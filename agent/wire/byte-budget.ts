/** What one reader (a request body, an answer) keeps of a message to parse it, counted against a shared budget. */
export interface KeptBytes {
  /** Keeps `bytes` from now on (more or fewer than before); `false`, and nothing changed, when that is refused. */
  resize(bytes: number): boolean;
  /** Keeps nothing any more. */
  release(): void;
}

/** Keeps whatever it is asked to (the in-process fallback bounds each message by its own cap only). */
export const UNBUDGETED: KeptBytes = { resize: () => true, release: () => {} };

/**
 * Bytes kept for parsing across every message in flight (`extscope proxy`: each request body until its end, each
 * answer until its JSON is complete or its SSE event ends). A message beyond `perMessage` or what the budget has
 * left is not kept (its reader skips it); bytes of it already kept are given back at once. The last quarter of
 * the budget is only for the first `smallMessage` bytes of a message: senders of large bodies cannot take it
 * all, and the small messages MCP clients send (a few KB) are still read while they try.
 */
export class ByteBudget {
  private used = 0;
  private readonly shared: number;

  constructor(
    readonly total: number,
    private readonly perMessage: number,
    private readonly smallMessage = 64 * 1024,
  ) {
    this.shared = Math.floor((total * 3) / 4);
  }

  /** Bytes kept now, across every reader. */
  get kept(): number {
    return this.used;
  }

  /** A reader's own account (its methods on a prototype: a proxied exchange makes three accounts). */
  account(): KeptBytes {
    return new Account(this);
  }

  /** A reader that keeps `from` bytes would keep `to`: `false`, and nothing changed, when that is refused. */
  move(from: number, to: number): boolean {
    const delta = to - from;
    if (delta > 0) {
      if (to > this.perMessage) return false;
      const limit = to <= this.smallMessage ? this.total : this.shared;
      if (this.used + delta > limit) return false;
    }
    this.used += delta;
    return true;
  }
}

class Account implements KeptBytes {
  private kept = 0;

  constructor(private readonly budget: ByteBudget) {}

  resize(bytes: number): boolean {
    if (!this.budget.move(this.kept, bytes)) return false;
    this.kept = bytes;
    return true;
  }

  release(): void {
    this.resize(0);
  }
}
