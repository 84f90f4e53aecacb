import type { ResourceBatch, ResourceIdentity } from '../../../model/batches.js';
import { goesToFoldedRow } from '../../common/session-fold.js';
import { INSTANCE_UPSERT_COLUMNS, instanceValues } from '../../common/columns.js';
import { identityHash, instanceKey } from '../../common/identity.js';
import { type ResourceLimits, limitResource, resourceCandidates } from '../../common/resource-limits.js';
import type { Queryable } from '../connection.js';

const MAX_COUNTED = 100_000;
const instanceColumns = INSTANCE_UPSERT_COLUMNS;

/**
 * Decides where instances not stored yet are stored (common/resource-limits.ts) and creates their rows, in a short
 * transaction of its own (writer/index.ts) under a lock that only the creation of instances takes, so that two
 * replicas cannot both take the last place; an export's own transaction then finds them like any other.
 */
export class ResourceLimit {
  /** Instances stored under `_OTHER` by this collector since start (for /metrics), each once while remembered. */
  overflowed = 0;
  /** Instance keys counted in {@link overflowed}: their later exports (retries, too) are not counted again. */
  private readonly counted = new Set<string>();

  constructor(private readonly limits: ResourceLimits) {}

  /**
   * Each batch's resource as stored (the same object when it fits), its instance row created if it was not there; a
   * session folded into its build's row (common/session-fold.ts) is stored there while its exports are no newer than its last.
   */
  async create(db: Queryable, batches: readonly ResourceBatch[], now: number): Promise<ResourceIdentity[]> {
    const resources = batches.map((batch) => batch.resource);
    // Exports of a new instance arrive together: those that find it created meanwhile need no lock.
    const hashes = resources.map((resource) => identityHash(instanceKey(resource)));
    const { rows: found } = await db.query<{ h: string }>("SELECT encode(key_hash, 'hex') AS h FROM instances WHERE key_hash = ANY($1::bytea[])", [hashes]);
    if (found.length === new Set(hashes.map((hash) => hash.toString('hex'))).size) return [...resources];
    await db.query("SELECT pg_advisory_xact_lock(hashtextextended('extscope:instances', 0))");
    const stored: ResourceIdentity[] = [];
    for (const batch of batches) {
      const limited = (await this.folded(db, batch)) ?? (await this.limit(db, batch.resource));
      await db.query(
        `INSERT INTO instances (key_hash, ${instanceColumns.join(', ')}, first_seen_ms, last_seen_ms)
         VALUES ($1, ${instanceColumns.map((_column, index) => `$${index + 2}`).join(', ')}, $${instanceColumns.length + 2}, $${instanceColumns.length + 2})
         ON CONFLICT (key_hash) DO NOTHING`,
        [identityHash(instanceKey(limited)), ...instanceValues(limited), now],
      );
      stored.push(limited);
    }
    return stored;
  }

  /** Where a folded session's export goes (its build row), or undefined: the instance is stored, was never folded, or runs again. */
  private async folded(db: Queryable, batch: ResourceBatch): Promise<ResourceIdentity | undefined> {
    const { rows } = await db.query<{ stored: boolean; clock_ms: number | null; service: string | null; instance_id: string | null }>(
      `SELECT EXISTS (SELECT 1 FROM instances WHERE key_hash = $1) AS stored, f.clock_ms, i.service, i.instance_id
       FROM folded_instances f JOIN instances i ON i.id = f.target_ref WHERE f.key_hash = $1`,
      [identityHash(instanceKey(batch.resource))],
    );
    const note = rows[0];
    if (note === undefined || note.stored || !goesToFoldedRow(note.clock_ms, batch)) return undefined;
    return { ...batch.resource, service: note.service, instanceId: note.instance_id };
  }

  /** Read under the lock: another replica may have created the instance meanwhile. */
  private async limit(db: Queryable, resource: ResourceIdentity): Promise<ResourceIdentity> {
    const candidates = resourceCandidates(resource);
    const { rows } = await db.query<{ known: number[]; service_known: boolean; services: number; instances: number }>(
      `SELECT array(SELECT k.i FROM unnest($1::bytea[]) WITH ORDINALITY AS k (h, i) JOIN instances ON key_hash = k.h)::int[] AS known,
         EXISTS (SELECT 1 FROM instances WHERE service = $2) AS service_known,
         (SELECT count(DISTINCT service) FROM instances)::bigint AS services, (SELECT count(*) FROM instances)::bigint AS instances`,
      [candidates.map((candidate) => identityHash(instanceKey(candidate))), resource.service],
    );
    const row = rows[0] as { known: number[]; service_known: boolean; services: number; instances: number };
    const knownInstances = new Set(row.known.map((ordinal) => instanceKey(candidates[ordinal - 1] as ResourceIdentity)));
    const { service, instanceId } = limitResource(
      resource,
      { knownInstances, serviceKnown: row.service_known, services: Number(row.services), instances: Number(row.instances) },
      this.limits,
    );
    if (service === resource.service && instanceId === resource.instanceId) return resource;
    const key = instanceKey(resource);
    if (!this.counted.has(key)) {
      if (this.counted.size >= MAX_COUNTED) this.counted.clear();
      this.counted.add(key);
      this.overflowed++;
    }
    return { ...resource, service, instanceId };
  }
}
