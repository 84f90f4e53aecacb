import type { RequestId } from './request-facts.js';

/** Requests in flight on one transport; beyond this the peer is misbehaving and new ones are not tracked. */
export const MAX_IN_FLIGHT = 100_000;

const NONE: unique symbol = Symbol('none');

/**
 * Requests in flight on one transport, by JSON-RPC id (ids are unique only per transport: every per-request
 * HTTP instance starts at 0). A client may reuse an id while the first request with it is still in flight;
 * those wait behind it, and answers are paired in arrival order.
 *
 * A request that arrives while nothing else is in flight (a client awaiting each answer: the common case) is
 * kept in a slot of its own, not in the Map: a Map that keeps going from one entry to none reallocates its
 * table on nearly every delete, which costs more than everything else done per request.
 */
export class InFlight<T> {
  private soloId: RequestId | typeof NONE = NONE;
  private soloValue: T | undefined;
  private readonly first = new Map<RequestId, T>();
  private readonly reused = new Map<RequestId, T[]>();

  /** {@link MAX_IN_FLIGHT} requests with distinct ids are in flight: {@link add} tracks no more. */
  get full(): boolean {
    return this.first.size + (this.soloId === NONE ? 0 : 1) >= MAX_IN_FLIGHT;
  }

  /** `false`, tracking nothing, when {@link full}. */
  add(id: RequestId, value: T): boolean {
    if (this.full) return false;
    if (this.soloId === NONE && this.first.size === 0) {
      this.soloId = id;
      this.soloValue = value;
    } else if (id !== this.soloId && !this.first.has(id)) {
      this.first.set(id, value);
    } else {
      const queue = this.reused.get(id);
      if (queue === undefined) this.reused.set(id, [value]);
      else queue.push(value);
    }
    return true;
  }

  /** The oldest request in flight under `id`, no longer tracked. */
  take(id: RequestId): T | undefined {
    if (id === this.soloId) {
      const value = this.soloValue;
      const next = this.nextReused(id);
      if (next === undefined) {
        this.soloId = NONE;
        this.soloValue = undefined;
      } else {
        this.soloValue = next;
      }
      return value;
    }
    const value = this.first.get(id);
    if (value === undefined) return undefined;
    const next = this.nextReused(id);
    if (next === undefined) this.first.delete(id);
    else this.first.set(id, next);
    return value;
  }

  /**
   * Replaces the oldest value under `id` that `matches` accepts with `value`, keeping its place in line;
   * returns the value replaced.
   */
  replaceOldest(id: RequestId, matches: (value: T) => boolean, value: T): T | undefined {
    let oldest: T | undefined;
    if (id === this.soloId) oldest = this.soloValue;
    else oldest = this.first.get(id);
    if (oldest === undefined) return undefined;
    if (matches(oldest)) {
      if (id === this.soloId) this.soloValue = value;
      else this.first.set(id, value);
      return oldest;
    }
    const queue = this.reused.size === 0 ? undefined : this.reused.get(id);
    const index = queue?.findIndex(matches) ?? -1;
    if (index < 0) return undefined;
    const replaced = queue![index];
    queue![index] = value;
    return replaced;
  }

  /** Every request still in flight, no longer tracked. */
  drain(): T[] {
    const all = this.soloId === NONE ? [] : [this.soloValue as T];
    all.push(...this.first.values());
    for (const queue of this.reused.values()) all.push(...queue);
    this.soloId = NONE;
    this.soloValue = undefined;
    this.first.clear();
    this.reused.clear();
    return all;
  }

  /** The next request waiting under `id` behind the oldest, no longer waiting. */
  private nextReused(id: RequestId): T | undefined {
    if (this.reused.size === 0) return undefined;
    const queue = this.reused.get(id);
    const next = queue?.shift();
    if (queue !== undefined && queue.length === 0) this.reused.delete(id);
    return next;
  }
}
