import type Database from 'better-sqlite3';
import type { ResourceBatch } from '../../../model/batches.js';

export interface AdvertisingInstance {
  id: number;
  advertised_ms: number | null;
  advertise_gen: number;
}

/**
 * What each instance advertises, in generations: a gauge collection newer than the last one starts a new
 * generation, and the rows it touches are what the instance advertises now. Points of the same collection
 * time (an export split by a forwarding collector) join the current generation; older ones only widen
 * first/last seen. Absent server name, version or fingerprint are stored as ''.
 */
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
  apply(instance: AdvertisingInstance, batch: ResourceBatch): void {
    if (batch.advertised.length === 0 && batch.advertisedCounts.length === 0) return;
    let newest = Number.NEGATIVE_INFINITY;
    for (const point of batch.advertised) newest = Math.max(newest, point.timeMs);
    for (const point of batch.advertisedCounts) newest = Math.max(newest, point.timeMs);
    let generation = instance.advertise_gen;
    if (instance.advertised_ms === null || newest > instance.advertised_ms) {
      generation++;
      this.setAdvertised.run(newest, generation, instance.id);
    }
    const currentMs = Math.max(newest, instance.advertised_ms ?? newest);
    const genFor = (timeMs: number): number => (timeMs >= currentMs ? generation : 0);
    for (const point of batch.advertised) {
      this.upsertAdvertised.run(instance.id, point.serverName ?? '', point.serverVersion ?? '', point.extensionId, point.fingerprint ?? '', point.timeMs, point.timeMs, genFor(point.timeMs));
    }
    for (const point of batch.advertisedCounts) {
      this.upsertCount.run(instance.id, point.serverName ?? '', point.serverVersion ?? '', point.count, point.timeMs, point.timeMs, genFor(point.timeMs));
    }
  }
}
