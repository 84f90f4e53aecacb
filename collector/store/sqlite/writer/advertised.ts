import type Database from 'better-sqlite3';
import type { AdvertisementPlan } from '../../common/advertisement-plan.js';

/** Writes what an instance advertises, as the ingest plan numbered it (common/advertisement-plan.ts). */
export class AdvertisedWriter {
  private readonly setAdvertised: Database.Statement;
  private readonly upsertAdvertised: Database.Statement;
  private readonly upsertCount: Database.Statement;

  constructor(db: Database.Database) {
    this.setAdvertised = db.prepare('UPDATE instances SET advertised_ms = ?, advertise_gen = ? WHERE id = ?');
    this.upsertAdvertised = db.prepare(`
      INSERT INTO advertised (instance_ref, server_name, server_version, extension_id, fingerprint, first_seen_ms, last_seen_ms, last_gen)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (instance_ref, server_name, server_version, extension_id, fingerprint) DO UPDATE SET
        first_seen_ms = min(first_seen_ms, excluded.first_seen_ms),
        last_seen_ms = max(last_seen_ms, excluded.last_seen_ms),
        last_gen = max(last_gen, excluded.last_gen)`);
    this.upsertCount = db.prepare(`
      INSERT INTO advertised_counts (instance_ref, server_name, server_version, count, first_seen_ms, last_seen_ms, last_gen)
      VALUES (?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (instance_ref, server_name, server_version) DO UPDATE SET
        count = CASE WHEN excluded.last_gen >= last_gen THEN excluded.count ELSE count END,
        first_seen_ms = min(first_seen_ms, excluded.first_seen_ms),
        last_seen_ms = max(last_seen_ms, excluded.last_seen_ms),
        last_gen = max(last_gen, excluded.last_gen)`);
  }

  /** Must run inside the apply transaction. */
  write(instanceId: number, plan: AdvertisementPlan): void {
    if (plan.instance !== undefined) this.setAdvertised.run(plan.instance.advertisedMs, plan.instance.generation, instanceId);
    for (const row of plan.advertised) this.upsertAdvertised.run(instanceId, ...row);
    for (const row of plan.counts) this.upsertCount.run(instanceId, ...row);
  }
}
