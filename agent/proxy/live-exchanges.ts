import type { ProxiedExchange } from './proxied-exchange.js';

/** An exchange in flight: what stops it, and its recording (a POST's) to wait for. */
export class LiveExchange {
  // Its place in the list of {@link LiveExchanges}, which alone sets them.
  previous: LiveExchange | undefined;
  next: LiveExchange | undefined;
  linked = false;

  constructor(
    readonly stop: () => void,
    readonly flow: ProxiedExchange | undefined,
  ) {}
}

/**
 * The exchanges in flight, for a stopping proxy to end. A list linked through the entries, not a `Set`: a set
 * whose size keeps rising and falling with concurrent exchanges rebuilds its table, and the tables it left held
 * every exchange's objects through the young generation's collections (promoted, then freed by full ones). An
 * entry taken out of the list lets go of its neighbours, so one kept alive keeps no other.
 */
export class LiveExchanges {
  private head: LiveExchange | undefined;

  add(entry: LiveExchange): void {
    entry.next = this.head;
    if (this.head !== undefined) this.head.previous = entry;
    this.head = entry;
    entry.linked = true;
  }

  delete(entry: LiveExchange): void {
    if (!entry.linked) return;
    entry.linked = false;
    if (entry.previous === undefined) this.head = entry.next;
    else entry.previous.next = entry.next;
    if (entry.next !== undefined) entry.next.previous = entry.previous;
    entry.previous = undefined;
    entry.next = undefined;
  }

  /** Every exchange in flight now. */
  all(): LiveExchange[] {
    const entries: LiveExchange[] = [];
    for (let entry = this.head; entry !== undefined; entry = entry.next) entries.push(entry);
    return entries;
  }
}
