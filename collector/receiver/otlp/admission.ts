/**
 * Bounds how many exports are being received and processed at once. Past the bound, a request is answered 503
 * with Retry-After before its body is read, so overload costs neither memory nor database time; OTLP
 * exporters retry such answers with backoff. While draining for shutdown everything new is turned away.
 */
export class Admission {
  private inFlight = 0;
  private draining = false;
  private readonly idleWaiters: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  get current(): number {
    return this.inFlight;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  tryEnter(): boolean {
    if (this.draining || this.inFlight >= this.limit) return false;
    this.inFlight++;
    return true;
  }

  leave(): void {
    this.inFlight--;
    if (this.inFlight === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** Stops admitting; resolves once every admitted export has been answered. */
  drain(): Promise<void> {
    this.draining = true;
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
