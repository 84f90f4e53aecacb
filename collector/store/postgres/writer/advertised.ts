import type { AdvertisementPlan } from '../../common/advertisement-plan.js';
import type { Queryable } from '../connection.js';

/**
 * Writes what an instance advertises, as the ingest plan numbered it (common/advertisement-plan.ts). The instance
 * row is locked by the export's instance upsert, so two replicas receiving the same instance's gauges one after
 * the other number its generations in turn.
 */
export async function writeAdvertised(db: Queryable, instanceId: number, plan: AdvertisementPlan): Promise<void> {
  if (plan.instance !== undefined) {
    await db.query('UPDATE instances SET advertised_ms = $1, advertise_gen = $2 WHERE id = $3', [
      plan.instance.advertisedMs,
      plan.instance.generation,
      instanceId,
    ]);
  }
  if (plan.advertised.length > 0) {
    await db.query(
      `INSERT INTO advertised (instance_ref, server_name, server_version, extension_id, fingerprint, first_seen_ms, last_seen_ms, last_gen)
       SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[], $8::bigint[])
       ON CONFLICT (instance_ref, server_name, server_version, extension_id, fingerprint) DO UPDATE SET
         first_seen_ms = LEAST(advertised.first_seen_ms, excluded.first_seen_ms),
         last_seen_ms = GREATEST(advertised.last_seen_ms, excluded.last_seen_ms),
         last_gen = GREATEST(advertised.last_gen, excluded.last_gen)`,
      [instanceId, ...[0, 1, 2, 3, 4, 5, 6].map((column) => plan.advertised.map((row) => row[column]))],
    );
  }
  // One upsert each, in order (there are few): a later point of the same key wins.
  for (const [serverName, serverVersion, count, timeMs, generation] of plan.counts) {
    await db.query(
      `INSERT INTO advertised_counts (instance_ref, server_name, server_version, count, first_seen_ms, last_seen_ms, last_gen)
       VALUES ($1, $2, $3, $4, $5, $5, $6)
       ON CONFLICT (instance_ref, server_name, server_version) DO UPDATE SET
         count = CASE WHEN excluded.last_gen >= advertised_counts.last_gen THEN excluded.count ELSE advertised_counts.count END,
         first_seen_ms = LEAST(advertised_counts.first_seen_ms, excluded.first_seen_ms),
         last_seen_ms = GREATEST(advertised_counts.last_seen_ms, excluded.last_seen_ms),
         last_gen = GREATEST(advertised_counts.last_gen, excluded.last_gen)`,
      [instanceId, serverName, serverVersion, count, timeMs, generation],
    );
  }
}
