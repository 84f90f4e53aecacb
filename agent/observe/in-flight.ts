import type { RequestId } from './request-facts.js';

/** Requests in flight on one transport; beyond this the peer is misbehaving and new ones are not tracked. */
export const MAX_IN_FLIGHT = 100_000;

/** Slots of the table for integer ids (a power of two): more requests than this in flight at once are rare. */
const SLOTS = 64;
const SLOT_MASK = SLOTS - 1;
const EMPTY: unique symbol = Symbol('empty');
// Copied, not filled, for each table: a copy of a packed array is one block move.
const EMPTY_IDS: readonly (RequestId | typeof EMPTY)[] = new Array(SLOTS).fill(EMPTY);
const NO_VALUES: readonly undefined[] = new Array(SLOTS).fill(undefined);

/**
 * Requests in flight on one transport, by JSON-RPC id (ids are unique only per transport: every per-request
 * HTTP instance starts at 0). A client may reuse an id while the first request with it is still in flight;
 * those wait behind it, and answers are paired in arrival order.
 *
 * SDK clients number their requests 0, 1, 2, …: such an id is kept in a slot of a small table, at `id mod 64`,
 * and everything else (string ids, a slot already taken) in a Map. A Map whose entries keep coming and going
 * rehashes its table every few requests, which costs more than everything else done per request; the slots are
 * reused in place and allocate nothing. Until a second request is in flight at once, the one in flight is kept in
 * two fields and no table is made: a connection per HTTP request never has a second.
 */
export class InFlight<T> {
  private soloId: RequestId | typeof EMPTY = EMPTY;
  private soloValue: T | undefined;
  // Made when a second request is in flight at once, and kept from then on.
  private slotIds: (RequestId | typeof EMPTY)[] | undefined;
  private slotValues: (T | undefined)[] | undefined;
  private first: Map<RequestId, T> | undefined;
  private reused: Map<RequestId, T[]> | undefined;
  /** Distinct ids in flight (the fields, or the slots and {@link first}). */
  private size = 0;

  /** {@link MAX_IN_FLIGHT} requests with distinct ids are in flight: {@link add} tracks no more. */
  get full(): boolean {
    return this.size >= MAX_IN_FLIGHT;
  }

  /** `false`, tracking nothing, when {@link full}. */
  add(id: RequestId, value: T): boolean {
    if (this.size >= MAX_IN_FLIGHT) return false;
    if (this.slotIds === undefined) {
      if (this.soloId === EMPTY) {
        this.soloId = id;
        this.soloValue = value;
        this.size = 1;
        return true;
      }
      this.makeTables();
    }
    return this.addToTables(id, value, this.slotIds!, this.slotValues!);
  }

  private addToTables(id: RequestId, value: T, slotIds: (RequestId | typeof EMPTY)[], slotValues: (T | undefined)[]): boolean {
    const slot = slotOf(id);
    if (slot >= 0 && slotIds[slot] === id) {
      this.queueBehind(id, value);
      return true;
    }
    if (this.first !== undefined && this.first.size > 0 && this.first.has(id)) {
      this.queueBehind(id, value);
      return true;
    }
    if (slot >= 0 && slotIds[slot] === EMPTY) {
      slotIds[slot] = id;
      slotValues[slot] = value;
    } else {
      (this.first ??= new Map()).set(id, value);
    }
    this.size++;
    return true;
  }

  /** The oldest request in flight under `id`, no longer tracked. */
  take(id: RequestId): T | undefined {
    const slotIds = this.slotIds;
    if (slotIds === undefined) {
      if (this.soloId !== id) return undefined;
      const value = this.soloValue;
      this.soloId = EMPTY;
      this.soloValue = undefined;
      this.size = 0;
      return value;
    }
    const slotValues = this.slotValues!;
    const slot = slotOf(id);
    if (slot >= 0 && slotIds[slot] === id) {
      const value = slotValues[slot];
      const next = this.nextReused(id);
      if (next === undefined) {
        slotIds[slot] = EMPTY;
        slotValues[slot] = undefined;
        this.size--;
      } else {
        slotValues[slot] = next;
      }
      return value;
    }
    const first = this.first;
    if (first === undefined || first.size === 0) return undefined;
    const value = first.get(id);
    if (value === undefined) return undefined;
    const next = this.nextReused(id);
    if (next === undefined) {
      first.delete(id);
      this.size--;
    } else {
      first.set(id, next);
    }
    return value;
  }

  /**
   * Replaces the oldest value under `id` that `matches` accepts with `value`, keeping its place in line;
   * returns the value replaced.
   */
  replaceOldest(id: RequestId, matches: (value: T) => boolean, value: T): T | undefined {
    const slotIds = this.slotIds;
    if (slotIds === undefined) {
      const solo = this.soloValue;
      if (this.soloId !== id || !matches(solo as T)) return undefined;
      this.soloValue = value;
      return solo;
    }
    const slot = slotOf(id);
    const inSlot = slot >= 0 && slotIds[slot] === id;
    const oldest = inSlot ? this.slotValues![slot] : this.first?.get(id);
    if (oldest === undefined) return undefined;
    if (matches(oldest)) {
      if (inSlot) this.slotValues![slot] = value;
      else this.first!.set(id, value);
      return oldest;
    }
    const queue = this.reused?.get(id);
    const index = queue?.findIndex(matches) ?? -1;
    if (index < 0) return undefined;
    const replaced = queue![index];
    queue![index] = value;
    return replaced;
  }

  /** Every request still in flight, no longer tracked. */
  drain(): T[] {
    // The common close (a connection per HTTP request, its one request answered): nothing to walk.
    if (this.size === 0) return [];
    const { slotIds, slotValues } = this;
    if (slotIds === undefined || slotValues === undefined) {
      const solo = this.soloValue as T;
      this.soloId = EMPTY;
      this.soloValue = undefined;
      this.size = 0;
      return [solo];
    }
    const all: T[] = [];
    for (let slot = 0; slot < SLOTS; slot++) {
      if (slotIds[slot] === EMPTY) continue;
      all.push(slotValues[slot] as T);
      slotIds[slot] = EMPTY;
      slotValues[slot] = undefined;
    }
    if (this.first !== undefined) all.push(...this.first.values());
    if (this.reused !== undefined) for (const queue of this.reused.values()) all.push(...queue);
    this.first = undefined;
    this.reused = undefined;
    this.size = 0;
    return all;
  }

  /** A second request is in flight: the tables are made, and the one kept in the fields moves into them. */
  private makeTables(): void {
    const slotIds = (this.slotIds = EMPTY_IDS.slice());
    const slotValues = (this.slotValues = NO_VALUES.slice());
    const id = this.soloId;
    if (id === EMPTY) return;
    const value = this.soloValue as T;
    this.soloId = EMPTY;
    this.soloValue = undefined;
    this.size = 0;
    this.addToTables(id, value, slotIds, slotValues);
  }

  private queueBehind(id: RequestId, value: T): void {
    const reused = (this.reused ??= new Map());
    const queue = reused.get(id);
    if (queue === undefined) reused.set(id, [value]);
    else queue.push(value);
  }

  /** The next request waiting under `id` behind the oldest, no longer waiting. */
  private nextReused(id: RequestId): T | undefined {
    const reused = this.reused;
    if (reused === undefined || reused.size === 0) return undefined;
    const queue = reused.get(id);
    const next = queue?.shift();
    if (queue !== undefined && queue.length === 0) reused.delete(id);
    return next;
  }
}

/** The slot of a non-negative integer id, or -1 (kept in the Map). */
function slotOf(id: RequestId): number {
  return typeof id === 'number' && id >= 0 && id <= 0x3fffffff && (id | 0) === id ? id & SLOT_MASK : -1;
}
