import type { ResourceIdentity } from '../../../model/batches.js';
import { type ResourceLimits, limitResource, resourceCandidates } from '../../common/resource-limits.js';
import { identityHash, instanceKey } from '../../common/identity.js';
import type { Queryable } from '../connection.js';
import { lockIdentityCreation } from './dimension-limit.js';

const MAX_COUNTED = 100_000;

/**
 * Loads what the resource limit (common/resource-limits.ts) needs, in one statement: known instances are the rows
 * of `instances`; a new one is decided under the identity-creation lock, so that two replicas cannot both take the
 * last place.
 */
export class ResourceLimit {
  /** Instances stored under `_OTHER` by this collector since start (for /metrics), each once while remembered. */
  overflowed = 0;
  /** Instance keys counted in {@link overflowed}: their later exports (retries, too) are not counted again. */
  private readonly counted = new Set<string>();

  constructor(private readonly limits: ResourceLimits) {}

  /** The resource as stored: the same object when its instance is known or still fits. Inside the apply transaction. */
  async apply(db: Queryable, resource: ResourceIdentity): Promise<ResourceIdentity> {
    const { rowCount } = await db.query('SELECT 1 FROM instances WHERE key_hash = $1', [identityHash(instanceKey(resource))]);
    if (rowCount !== 0) return resource;
    await lockIdentityCreation(db);
    // Read under the lock: another replica may have created it while this export waited.
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
