/** An item waiting for its group's commit, and how to answer it. */
interface Waiting<Item, Result> {
  item: Item;
  weight: number;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: items that arrive while a transaction is in flight are written together in the next one, so that
 * a burst of exports pays one commit (one WAL flush), one round trip per statement and one statement per kind of
 * row, rather than one each. At most `inFlight` groups run at once; a group takes the items waiting, in arrival
 * order, up to `maxWeight` (at least one item, however heavy). Each item is answered only when its group's `run`
 * settles: with its own result, or with the group's failure.
 */
export class GroupCommit<Item, Result> {
  private readonly waiting: Waiting<Item, Result>[] = [];
  private running = 0;
  private scheduled = false;

  constructor(
    private readonly run: (items: readonly Item[]) => Promise<Result[]>,
    private readonly weigh: (item: Item) => number,
    private readonly limits: { inFlight: number; maxWeight: number },
  ) {}

  submit(item: Item): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, weight: this.weigh(item), resolve, reject });
      this.schedule();
    });
  }

  /**
   * Groups start on the next turn of the event loop, not at once: the items submitted in this turn (the senders a
   * commit has just answered send again in it) join the same group rather than each taking a transaction of its own.
   */
  private schedule(): void {
    if (this.scheduled || this.running >= this.limits.inFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.start();
    });
  }

  private start(): void {
    while (this.running < this.limits.inFlight && this.waiting.length > 0) {
      let taken = 1;
      let weight = (this.waiting[0] as Waiting<Item, Result>).weight;
      while (taken < this.waiting.length && weight + (this.waiting[taken] as Waiting<Item, Result>).weight <= this.limits.maxWeight) {
        weight += (this.waiting[taken] as Waiting<Item, Result>).weight;
        taken++;
      }
      const group = this.waiting.splice(0, taken);
      this.running++;
      void this.run(group.map((entry) => entry.item))
        .then(
          (results) => group.forEach((entry, index) => entry.resolve(results[index] as Result)),
          (error: unknown) => group.forEach((entry) => entry.reject(error)),
        )
        .finally(() => {
          this.running--;
          this.schedule();
        });
    }
  }
}
