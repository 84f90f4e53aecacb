import type pg from 'pg';
import type { ExtensionIdLimitStore, InstanceHour, InstanceHourIds } from '../store.js';
import { inTransaction, storeRead } from './connection.js';

const byKey = (a: InstanceHour, b: InstanceHour): number => (a.instance < b.instance ? -1 : a.instance > b.instance ? 1 : a.hour - b.hour);

/**
 * The ids the distinct-extension-id limit admitted, per instance and hour (`extension_id_limits`, migration
 * 004). With several replicas the room left in a set is the database's to decide: {@link admitWithin} takes a
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

  /** Every replica asks the database: the room left in a set is shared. */
  admitIdsWithin(entries: readonly InstanceHourIds[], max: number): Promise<InstanceHourIds[]> {
    const sorted = [...entries].sort(byKey);
    return inTransaction(this.pool, async (db) => {
      const decided: InstanceHourIds[] = [];
      for (const { instance, hour, ids } of sorted) {
        await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, $2))', [`extscope:extension-ids:${instance}`, hour]);
        const { rows } = await db.query<{ extension_id: string }>('SELECT extension_id FROM extension_id_limits WHERE instance = $1 AND hour = $2', [
          instance,
          hour,
        ]);
        const admitted = new Set(rows.map((row) => row.extension_id));
        const added: string[] = [];
        for (const id of ids) {
          if (admitted.has(id) || admitted.size >= max) continue;
          admitted.add(id);
          added.push(id);
        }
        if (added.length > 0) {
          await db.query('INSERT INTO extension_id_limits (instance, hour, extension_id) SELECT $1, $2, unnest($3::text[]) ON CONFLICT DO NOTHING', [
            instance,
            hour,
            added,
          ]);
        }
        decided.push({ instance, hour, ids: [...admitted] });
      }
      return decided;
    });
  }
}
