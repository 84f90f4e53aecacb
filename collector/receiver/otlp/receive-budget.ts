/**
 * How long a body may go without making progress ({@link PROGRESS_BYTES} more) before its bytes can be taken back
 * for bodies that are arriving. Well above the gaps of a sender that is sending (TCP on a lossy link retransmits
 * within about a second), well below the receive deadline that ends such a body anyway.
 */
export const RECEIVE_STALL_MS = 2000;

/**
 * What a body must receive within {@link RECEIVE_STALL_MS} to count as arriving (8 KiB/s): a sender trickling a
 * byte now and then to look alive holds its bytes no better than one that stopped.
 */
const PROGRESS_BYTES = 16 * 1024;

/**
 * Bytes of export bodies on their way in (received, not yet complete) across all connections. A body holds no
 * admission slot while it arrives (admission.ts), so what arriving bodies hold is bounded here instead: in total,
 * per connection (one body at a time, at most the body limit) and per peer address (a fair share: the total
 * divided among the addresses holding bytes). Past the bound, room is made from bodies that are not arriving
 * (less than 16 KiB in `stallMs`) and then from addresses over their share; when there is still none, the chunk is
 * refused and its sender told to retry. So sockets that stall, or reconnect the moment they are closed, from one
 * address cannot hold what every other sender needs; neither can they hold it from many, once they stall.
 */
export class ReceiveBudget {
  private used = 0;
  private readonly byPeer = new Map<string, number>();
  private readonly bodies = new Set<ArrivingBody>();

  constructor(
    readonly totalBytes: number,
    private readonly stallMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Bytes held by arriving bodies now. */
  get inUse(): number {
    return this.used;
  }

  /**
   * A body begins to arrive from `peer`; `evict` is called (once) when its bytes are taken back for another body
   * (the body then has to be refused: its bytes are no longer counted).
   */
  open(peer: string, evict: (reason: EvictionReason) => void): ArrivingBody {
    const body = new ArrivingBody(this, peer, evict, this.now());
    this.bodies.add(body);
    return body;
  }

  /** @internal (ArrivingBody) */
  charge(body: ArrivingBody, bytes: number): boolean {
    body.progress(bytes, this.now());
    if (!this.fits(body.peer, bytes)) this.makeRoom(body, bytes);
    if (!this.fits(body.peer, bytes)) return false;
    this.used += bytes;
    this.byPeer.set(body.peer, (this.byPeer.get(body.peer) ?? 0) + bytes);
    body.held += bytes;
    return true;
  }

  /** @internal (ArrivingBody) */
  release(body: ArrivingBody): void {
    this.bodies.delete(body);
    if (body.held === 0) return;
    this.used -= body.held;
    const left = (this.byPeer.get(body.peer) ?? 0) - body.held;
    if (left > 0) this.byPeer.set(body.peer, left);
    else this.byPeer.delete(body.peer);
    body.held = 0;
  }

  /** What one address may hold now: the total, shared equally among the addresses holding bytes and `asking`'s. */
  private share(asking: string): number {
    return this.totalBytes / (this.byPeer.size + (this.byPeer.has(asking) ? 0 : 1));
  }

  private fits(peer: string, bytes: number): boolean {
    return this.used + bytes <= this.totalBytes && (this.byPeer.get(peer) ?? 0) + bytes <= this.share(peer);
  }

  /**
   * Takes bytes back for `asking`: first from bodies that are not arriving (longest without progress first), then,
   * when `asking`'s address is within its share, from addresses over theirs (in the same order).
   */
  private makeRoom(asking: ArrivingBody, bytes: number): void {
    const now = this.now();
    const others = [...this.bodies].filter((body) => body !== asking && body.held > 0).sort((a, b) => a.progressAt - b.progressAt);
    for (const body of others) {
      if (this.fits(asking.peer, bytes)) return;
      if (now - body.progressAt >= this.stallMs) body.evict('stalled');
    }
    if ((this.byPeer.get(asking.peer) ?? 0) + bytes > this.share(asking.peer)) return;
    for (const body of others) {
      if (this.fits(asking.peer, bytes)) return;
      if (body.held > 0 && body.peer !== asking.peer && (this.byPeer.get(body.peer) ?? 0) > this.share(asking.peer)) body.evict('over_share');
    }
  }
}

/** Why an arriving body's bytes were taken back: it stopped arriving, or its address held more than its share. */
export type EvictionReason = 'stalled' | 'over_share';

/** One body's bytes in the {@link ReceiveBudget}, from its first byte until it is complete or refused. */
export class ArrivingBody {
  held = 0;
  /** When the body last made progress: began, or received {@link PROGRESS_BYTES} more. */
  progressAt: number;
  private sinceProgress = 0;
  private evicted = false;

  constructor(
    private readonly budget: ReceiveBudget,
    readonly peer: string,
    private readonly onEvict: (reason: EvictionReason) => void,
    now: number,
  ) {
    this.progressAt = now;
  }

  /** @internal (ReceiveBudget) */
  progress(bytes: number, now: number): void {
    this.sinceProgress += bytes;
    if (this.sinceProgress < PROGRESS_BYTES) return;
    this.sinceProgress = 0;
    this.progressAt = now;
  }

  /** Counts `bytes` more of this body: false when there is no room for them (the body is to be refused). */
  take(bytes: number): boolean {
    return !this.evicted && this.budget.charge(this, bytes);
  }

  /** The body is complete (its bytes now count against the admission slot it takes) or refused. Idempotent. */
  release(): void {
    this.budget.release(this);
  }

  /** @internal (ReceiveBudget) */
  evict(reason: EvictionReason): void {
    if (this.evicted) return;
    this.evicted = true;
    this.release();
    this.onEvict(reason);
  }
}
