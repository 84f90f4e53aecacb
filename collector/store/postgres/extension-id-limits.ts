import type pg from 'pg';
import type { ExtensionIdLimitStore, InstanceHour, InstanceHourIds } from '../store.js';
import { inTransaction, storeRead } from './connection.js';

/**
 * The ids the distinct-extension-id limit admitted, per instance and hour (`extension_id_limits`, migration
 * 004). With several replicas the room left in a set is the database's to decide: {@link admitIdsWithin} takes a
 * transaction-scoped advisory lock per (instance, hour), in key order (so two exports never wait on each other
 * in opposite orders), reads the set and adds what fits, so that two replicas cannot both take the last places.
 */
export class ExtensionIdLimitTable implements ExtensionIdLimitStore {
  constructor(private readonly pool: pg.Pool) {}

  admittedIds(keys: readonly InstanceHour[]): Promise<InstanceHourIds[]> {
    return storeRead(() => this.read(keys));
  }

  private async read(keys: readonly InstanceHour[]): Promise<InstanceHourIds[]> {
    if (keys.length === 0) return [];
    const { rows } = await this.pool.query<{ instance: string; hour: number; ids: string[] }>(
      `SELECT l.instance, l.hour, array_agg(l.extension_id) AS ids
       FROM extension_id_limits l JOIN unnest($1::text[], $2::bigint[]) AS k (instance, hour) USING (instance, hour)
       GROUP BY l.instance, l.hour`,
      [keys.map((key) => key.instance), keys.map((key) => key.hour)],
    );
    return rows;
  }

  admitIds(entries: readonly InstanceHourIds[]): Promise<void> {
    const rows = entries.flatMap(({ instance, hour, ids }) => ids.map((id) => [instance, hour, id] as const));
    if (rows.length === 0) return Promise.resolve();
    return inTransaction(this.pool, async (db) => {
      await db.query(
        `INSERT INTO extension_id_limits (instance, hour, extension_id)
         SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[]) ORDER BY 1, 2, 3 ON CONFLICT DO NOTHING`,
        [rows.map((row) => row[0]), rows.map((row) => row[1]), rows.map((row) => row[2])],
      );
    });
  }

  /**
   * Every replica asks the database: the room left in a set is shared. One statement, whatever the number of sets
   * (migration 012's function: per set, in key order, its lock, its read and its insert).
   */
  admitIdsWithin(entries: readonly InstanceHourIds[], max: number): Promise<InstanceHourIds[]> {
    if (entries.length === 0) return Promise.resolve([]);
    const rows = entries.flatMap(({ instance, hour, ids }) => ids.map((id) => [instance, hour, id] as const));
    return storeRead(async () => {
      const { rows: sets } = await this.pool.query<{ set_instance: string; set_hour: number; set_ids: string[] }>({
        name: 'extscope-admit-extension-ids',
        text: 'SELECT set_instance, set_hour, set_ids FROM extscope_admit_extension_ids($1::text[], $2::bigint[], $3::text[], $4::integer)',
        values: [rows.map((row) => row[0]), rows.map((row) => row[1]), rows.map((row) => row[2]), max],
      });
      return sets.map((set) => ({ instance: set.set_instance, hour: set.set_hour, ids: set.set_ids }));
    });
  }
}
