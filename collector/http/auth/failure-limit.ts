/**
 * Failed authentications per client address, in fixed windows. Past `maxFailures` in a window, further failures
 * from that address are answered 429 with Retry-After (the rest of the window) instead of 401: a client with a
 * wrong or missing token is told to slow down, and a flood of guesses costs a counter, not a log line each.
 * A request with a valid token is never counted or refused, and addresses are independent. At most
 * `maxAddresses` are remembered (the oldest forgotten first), so a spray from many addresses costs bounded memory.
 */
export class AuthFailureLimit {
  private readonly windows = new Map<string, { start: number; failures: number }>();

  constructor(
    private readonly options: { maxFailures: number; windowMs: number; maxAddresses: number; clock?: () => number } = {
      maxFailures: 10,
      windowMs: 60_000,
      maxAddresses: 10_000,
    },
  ) {}

  get trackedAddresses(): number {
    return this.windows.size;
  }

  /** Records a failed attempt; the seconds to wait when the address is over its limit, otherwise undefined. */
  failed(address: string): number | undefined {
    const now = (this.options.clock ?? Date.now)();
    let window = this.windows.get(address);
    if (window === undefined || now - window.start >= this.options.windowMs) {
      this.windows.delete(address);
      while (this.windows.size >= this.options.maxAddresses) {
        const oldest = this.windows.keys().next().value as string;
        this.windows.delete(oldest);
      }
      window = { start: now, failures: 0 };
      this.windows.set(address, window);
    }
    window.failures++;
    if (window.failures <= this.options.maxFailures) return undefined;
    return Math.max(1, Math.ceil((window.start + this.options.windowMs - now) / 1000));
  }
}

export const AUTH_RATE_LIMITED = 'too many failed authentication attempts from this address; retry later';
