/**
 * An id cache that is transaction-aware: entries learnt inside a transaction become visible to later
 * transactions only once it commits (a rolled-back insert must not leave a dangling id behind).
 * Bounded by clearing: every entry can be looked up again in the database.
 */
export class StagedCache<V> {
  private readonly committed = new Map<string, V>();
  private readonly staged = new Map<string, V>();

  constructor(private readonly capacity: number) {}

  get(key: string): V | undefined {
    return this.committed.get(key) ?? this.staged.get(key);
  }

  stage(key: string, value: V): void {
    this.staged.set(key, value);
  }

  commit(): void {
    if (this.staged.size === 0) return;
    if (this.committed.size + this.staged.size > this.capacity) this.committed.clear();
    for (const [key, value] of this.staged) this.committed.set(key, value);
    this.staged.clear();
  }

  rollback(): void {
    this.staged.clear();
  }

  clear(): void {
    this.committed.clear();
    this.staged.clear();
  }
}

/**
 * The same, keyed by two strings without joining them: the first is shared by many lookups (one metric of one
 * export), the second already hashed once upstream. Joining would build, and hash, a long new string per point.
 */
export class StagedCache2<V> {
  private committed = new Map<string, Map<string, V>>();
  private staged = new Map<string, Map<string, V>>();
  private size = 0;

  constructor(private readonly capacity: number) {}

  get(outer: string, inner: string): V | undefined {
    return this.committed.get(outer)?.get(inner) ?? (this.staged.size === 0 ? undefined : this.staged.get(outer)?.get(inner));
  }

  stage(outer: string, inner: string, value: V): void {
    let map = this.staged.get(outer);
    if (map === undefined) this.staged.set(outer, (map = new Map()));
    map.set(inner, value);
  }

  commit(): void {
    if (this.staged.size === 0) return;
    for (const [outer, entries] of this.staged) {
      if (this.size + entries.size > this.capacity) {
        this.committed = new Map();
        this.size = 0;
      }
      let map = this.committed.get(outer);
      if (map === undefined) this.committed.set(outer, (map = new Map()));
      for (const [inner, value] of entries) {
        if (!map.has(inner)) this.size++;
        map.set(inner, value);
      }
    }
    this.staged = new Map();
  }

  rollback(): void {
    if (this.staged.size > 0) this.staged = new Map();
  }

  clear(): void {
    this.committed = new Map();
    this.staged = new Map();
    this.size = 0;
  }
}
