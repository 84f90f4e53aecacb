import { OVERFLOW_VALUE } from '../../../../contract/index.js';
import type { ResourceIdentity } from '../../../model/batches.js';
import type { ResourceLimits } from '../../common/resource-limits.js';
import { identityHash, instanceKey } from '../../common/identity.js';
import type { Queryable } from '../connection.js';
import { lockIdentityCreation } from './dimension-limit.js';

const MAX_COUNTED = 100_000;

/**
 * Bounds service names and instances as the SQLite store does (sqlite/writer/resource-limit.ts): a new one past
 * its limit is stored as `_OTHER`, its streams kept apart. Known instances are the rows of `instances`; a new one
 * is decided under the identity-creation lock, so that two replicas cannot both take the last place.
 */
export class ResourceLimit {
  /** Instances stored under `_OTHER` by this collector since start (for /metrics), each once while remembered. */
  overflowed = 0;
  /** Instance keys counted in {@link overflowed}: their later exports (retries, too) are not counted again. */
  private readonly counted = new Set<string>();

  constructor(private readonly limits: ResourceLimits) {}

  /** The resource as stored: the same object when its instance is known or still fits. Inside the apply transaction. */
  async apply(db: Queryable, resource: ResourceIdentity): Promise<ResourceIdentity> {
    if (await this.known(db, resource.service, resource.instanceId)) return resource;
    await lockIdentityCreation(db);
    // Another replica may have created it while this export waited for the lock.
    if (await this.known(db, resource.service, resource.instanceId)) return resource;
    let { service, instanceId } = resource;
    if (service !== null && service !== OVERFLOW_VALUE && (await db.query('SELECT 1 FROM instances WHERE service = $1 LIMIT 1', [service])).rowCount === 0) {
      const { rows } = await db.query<{ n: number }>('SELECT count(DISTINCT service)::bigint AS n FROM instances');
      if ((rows[0]?.n ?? 0) >= this.limits.maxServices) service = OVERFLOW_VALUE;
    }
    if (service === resource.service || !(await this.known(db, service, instanceId))) {
      const { rows } = await db.query<{ n: number }>('SELECT count(*)::bigint AS n FROM instances');
      if ((rows[0]?.n ?? 0) >= this.limits.maxInstances) instanceId = OVERFLOW_VALUE;
    }
    if (service === resource.service && instanceId === resource.instanceId) return resource;
    const key = instanceKey(resource);
    if (!this.counted.has(key)) {
      if (this.counted.size >= MAX_COUNTED) this.counted.clear();
      this.counted.add(key);
      this.overflowed++;
    }
    return { ...resource, service, instanceId };
  }

  private async known(db: Queryable, service: string | null, instanceId: string | null): Promise<boolean> {
    const { rowCount } = await db.query('SELECT 1 FROM instances WHERE key_hash = $1', [identityHash(instanceKey({ service, instanceId }))]);
    return rowCount !== 0;
  }
}
