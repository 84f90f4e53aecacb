import type { RequestId } from './request-facts.js';

/** Requests in flight on one transport; beyond this the peer is misbehaving and new ones are not tracked. */
export const MAX_IN_FLIGHT = 100_000;

/**
 * Requests in flight on one transport, by JSON-RPC id (ids are unique only per transport: every per-request
 * HTTP instance starts at 0). A client may reuse an id while the first request with it is still in flight;
 * those wait behind it, and answers are paired in arrival order.
 */
export class InFlight<T> {
  private readonly first = new Map<RequestId, T>();
  private readonly reused = new Map<RequestId, T[]>();

  /** {@link MAX_IN_FLIGHT} requests with distinct ids are in flight: {@link add} tracks no more. */
  get full(): boolean {
    return this.first.size >= MAX_IN_FLIGHT;
  }

  /** `false`, tracking nothing, when {@link full}. */
  add(id: RequestId, value: T): boolean {
    if (this.full) return false;
    if (!this.first.has(id)) {
      this.first.set(id, value);
      return true;
    }
    const queue = this.reused.get(id);
    if (queue === undefined) this.reused.set(id, [value]);
    else queue.push(value);
    return true;
  }

  /** The oldest request in flight under `id`, no longer tracked. */
  take(id: RequestId): T | undefined {
    const value = this.first.get(id);
    if (value === undefined) return undefined;
    const queue = this.reused.size === 0 ? undefined : this.reused.get(id);
    const next = queue?.shift();
    if (next === undefined) this.first.delete(id);
    else {
      this.first.set(id, next);
      if (queue!.length === 0) this.reused.delete(id);
    }
    return value;
  }

  /** Every request still in flight, no longer tracked. */
  drain(): T[] {
    const all = [...this.first.values()];
    for (const queue of this.reused.values()) all.push(...queue);
    this.first.clear();
    this.reused.clear();
    return all;
  }
}
