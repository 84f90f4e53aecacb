import type { ResourceBatch } from '../../../model/batches.js';
import type { Queryable } from '../connection.js';

/**
 * What each instance advertises, in generations, with the same rules as the SQLite store
 * (sqlite/writer/advertised.ts). The instance row is locked by the export's instance upsert, so two replicas
 * receiving the same instance's gauges one after the other number its generations in turn.
 */
export async function applyAdvertised(db: Queryable, instanceId: number, batch: ResourceBatch): Promise<void> {
  if (batch.advertised.length === 0 && batch.advertisedCounts.length === 0) return;
  const { rows } = await db.query<{ advertised_ms: number | null; advertise_gen: number }>('SELECT advertised_ms, advertise_gen FROM instances WHERE id = $1', [instanceId]);
  const instance = rows[0];
  if (instance === undefined) return;
  let newest = Number.NEGATIVE_INFINITY;
  for (const point of batch.advertised) newest = Math.max(newest, point.timeMs);
  for (const point of batch.advertisedCounts) newest = Math.max(newest, point.timeMs);
  let generation = instance.advertise_gen;
  if (instance.advertised_ms === null || newest > instance.advertised_ms) {
    generation++;
    await db.query('UPDATE instances SET advertised_ms = $1, advertise_gen = $2 WHERE id = $3', [newest, generation, instanceId]);
  }
  const currentMs = Math.max(newest, instance.advertised_ms ?? newest);
  const genFor = (timeMs: number): number => (timeMs >= currentMs ? generation : 0);
  if (batch.advertised.length > 0) {
    // Merged per key first: one statement may not touch a row twice.
    const byKey = new Map<string, [string, string, string, string, number, number, number]>();
    for (const point of batch.advertised) {
      const row: [string, string, string, string, number, number, number] = [point.serverName ?? '', point.serverVersion ?? '', point.extensionId, point.fingerprint ?? '', point.timeMs, point.timeMs, genFor(point.timeMs)];
      const key = JSON.stringify(row.slice(0, 4));
      const seen = byKey.get(key);
      if (seen === undefined) byKey.set(key, row);
      else byKey.set(key, [row[0], row[1], row[2], row[3], Math.min(seen[4], row[4]), Math.max(seen[5], row[5]), Math.max(seen[6], row[6])]);
    }
    const list = [...byKey.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, row]) => row);
    await db.query(
      `INSERT INTO advertised (instance_ref, server_name, server_version, extension_id, fingerprint, first_seen_ms, last_seen_ms, last_gen)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[])
       ON CONFLICT (instance_ref, server_name, server_version, extension_id, fingerprint) DO UPDATE SET
         first_seen_ms = LEAST(advertised.first_seen_ms, excluded.first_seen_ms),
         last_seen_ms = GREATEST(advertised.last_seen_ms, excluded.last_seen_ms),
         last_gen = GREATEST(advertised.last_gen, excluded.last_gen)`,
      [instanceId, ...[0, 1, 2, 3, 4, 5, 6].map((column) => list.map((row) => row[column]))],
    );
  }
  // Counts in order: a later point of the same key wins as in SQLite (one upsert each; there are few).
  for (const point of batch.advertisedCounts) {
    await db.query(
      `INSERT INTO advertised_counts (instance_ref, server_name, server_version, count, first_seen_ms, last_seen_ms, last_gen)
       VALUES ($1, $2, $3, $4, $5, $5, $6)
       ON CONFLICT (instance_ref, server_name, server_version) DO UPDATE SET
         count = CASE WHEN excluded.last_gen >= advertised_counts.last_gen THEN excluded.count ELSE advertised_counts.count END,
         first_seen_ms = LEAST(advertised_counts.first_seen_ms, excluded.first_seen_ms),
         last_seen_ms = GREATEST(advertised_counts.last_seen_ms, excluded.last_seen_ms),
         last_gen = GREATEST(advertised_counts.last_gen, excluded.last_gen)`,
      [instanceId, point.serverName ?? '', point.serverVersion ?? '', point.count, point.timeMs, genFor(point.timeMs)],
    );
  }
}
