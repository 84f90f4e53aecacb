/**
 * Bounds how many exports are processed at once. An export takes its slot once it has arrived in full (an HTTP
 * body to its last byte, a gRPC call's message and half-close), so a sender that opens exports and does not
 * finish them holds no slot, however often it reconnects; what such bodies hold meanwhile is bytes, bounded by
 * the {@link ReceiveBudget}. At the limit, a new export is answered 503 with Retry-After before its body is read,
 * and one that arrives in full while every slot is taken is answered so too; OTLP exporters retry such answers
 * with backoff. While draining for shutdown, nothing new is begun; exports already arriving may still finish.
 */
export class Admission {
  private inFlight = 0;
  private arriving = 0;
  private draining = false;
  private readonly idleWaiters: (() => void)[] = [];

  constructor(readonly limit: number) {}

  /** Exports holding a slot (arrived, being decoded and stored, or answered but not yet written). */
  get current(): number {
    return this.inFlight;
  }

  /** Exports begun and not yet arrived in full: they hold no slot. */
  get receiving(): number {
    return this.arriving;
  }

  /** Every slot is taken: a new export is answered 503 now. */
  get isSaturated(): boolean {
    return this.inFlight >= this.limit;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /**
   * An export begins (its headers or metadata are in): a ticket, or undefined when draining or saturated (then it
   * is answered before anything else is spent on it). The ticket must be ended on every path ({@link Ticket.end}).
   */
  begin(): Ticket | undefined {
    if (this.draining || this.isSaturated) return undefined;
    this.arriving++;
    return new Ticket({
      enter: () => {
        this.arriving--;
        if (this.isSaturated) {
          this.settle();
          return false;
        }
        this.inFlight++;
        return true;
      },
      end: (admitted) => {
        if (admitted) this.inFlight--;
        else this.arriving--;
        this.settle();
      },
    });
  }

  /** Stops beginning exports; resolves once every export begun has been answered or abandoned. */
  drain(): Promise<void> {
    this.draining = true;
    if (this.inFlight === 0 && this.arriving === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private settle(): void {
    if (this.inFlight === 0 && this.arriving === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}

type TicketState = 'arriving' | 'admitted' | 'ended';

/** One export's place in the {@link Admission}: at most one slot, given back once, whichever path ends the export. */
export class Ticket {
  private state: TicketState = 'arriving';

  constructor(private readonly admission: { enter(): boolean; end(admitted: boolean): void }) {}

  get admitted(): boolean {
    return this.state === 'admitted';
  }

  /** The export has arrived in full: takes its slot (false: every slot is taken, and the ticket is ended). */
  enter(): boolean {
    if (this.state !== 'arriving') return this.state === 'admitted';
    if (this.admission.enter()) {
      this.state = 'admitted';
      return true;
    }
    this.state = 'ended';
    return false;
  }

  /** The export was answered or abandoned: gives back what the ticket holds. Idempotent. */
  end(): void {
    if (this.state === 'ended') return;
    const admitted = this.state === 'admitted';
    this.state = 'ended';
    this.admission.end(admitted);
  }
}
