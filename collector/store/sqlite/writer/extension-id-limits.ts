import type Database from 'better-sqlite3';
import type { ExtensionIdLimitStore, InstanceHour, InstanceHourIds } from '../../store.js';
import type { SqliteCore } from '../core.js';

/** The ids the distinct-extension-id limit admitted, per instance and hour (`extension_id_limits`). */
export class ExtensionIdLimitTable implements ExtensionIdLimitStore {
  private readonly select: Database.Statement;
  private readonly insert: Database.Statement;
  private readonly insertAll: (entries: readonly InstanceHourIds[]) => void;
  private readonly insertWithin: (entries: readonly InstanceHourIds[], max: number) => InstanceHourIds[];

  constructor(private readonly core: SqliteCore) {
    const db = core.db;
    this.select = db.prepare('SELECT extension_id FROM extension_id_limits WHERE instance = ? AND hour = ?').pluck();
    this.insert = db.prepare('INSERT OR IGNORE INTO extension_id_limits (instance, hour, extension_id) VALUES (?, ?, ?)');
    this.insertAll = db.transaction((entries: readonly InstanceHourIds[]) => {
      for (const { instance, hour, ids } of entries) for (const id of ids) this.insert.run(instance, hour, id);
    });
    this.insertWithin = db.transaction((entries: readonly InstanceHourIds[], max: number) =>
      entries.map(({ instance, hour, ids }) => {
        const admitted = new Set(this.select.all(instance, hour) as string[]);
        for (const id of ids) {
          if (admitted.has(id) || admitted.size >= max) continue;
          admitted.add(id);
          this.insert.run(instance, hour, id);
        }
        return { instance, hour, ids: [...admitted] };
      }),
    );
  }

  async admittedIds(keys: readonly InstanceHour[]): Promise<InstanceHourIds[]> {
    const found: InstanceHourIds[] = [];
    for (const { instance, hour } of keys) {
      const ids = this.select.all(instance, hour) as string[];
      if (ids.length > 0) found.push({ instance, hour, ids });
    }
    return found;
  }

  admitIds(entries: readonly InstanceHourIds[]): Promise<void> {
    if (entries.length === 0) return Promise.resolve();
    return this.core.write(() => this.insertAll(entries));
  }

  /** One collector writes an SQLite file: its write queue is what makes the decision atomic. */
  admitIdsWithin(entries: readonly InstanceHourIds[], max: number): Promise<InstanceHourIds[]> {
    if (entries.length === 0) return Promise.resolve([]);
    return this.core.write(() => this.insertWithin(entries, max));
  }
}
