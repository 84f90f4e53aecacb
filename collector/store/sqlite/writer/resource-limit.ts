import type Database from 'better-sqlite3';
import { OVERFLOW_VALUE } from '../../../../contract/index.js';
import type { ResourceIdentity } from '../../../model/batches.js';
import { identityHash, instanceKey } from '../../common/identity.js';
import { StagedCache } from './staged-cache.js';
import type { ResourceLimits } from '../../common/resource-limits.js';

/**
 * Bounds the two dimensions a sender controls through its resource: service names and instance ids (every
 * process, every stdio session mints one). Known instances are the rows of `instances`, so the decision is the
 * database's and the same after a restart; retention's dropping of silent instances frees their places. The
 * stream identity is not touched: an instance stored as `_OTHER` keeps its own streams (dedup, cumulative
 * conversion), only their counts add up under `_OTHER`. Runs inside the apply transaction; after a rollback the
 * counts are read again ({@link recount}).
 */
export class ResourceLimit {
  private readonly statements;
  private services = 0;
  private instances = 0;
  /** Where an instance over a limit is stored, by its own key: its later exports (retries, too) take one lookup and are not counted again. */
  private readonly overflowing = new StagedCache<Pick<ResourceIdentity, 'service' | 'instanceId'>>(100_000);
  /** Instances stored under `_OTHER` (service, instance id or both) since start, each once while remembered. */
  overflowed = 0;

  constructor(
    db: Database.Database,
    private readonly limits: ResourceLimits,
  ) {
    this.statements = {
      instance: db.prepare('SELECT 1 FROM instances WHERE key_hash = ?').pluck(),
      service: db.prepare('SELECT 1 FROM instances WHERE service = ? LIMIT 1').pluck(),
      countServices: db.prepare('SELECT count(DISTINCT service) FROM instances').pluck(),
      countInstances: db.prepare('SELECT count(*) FROM instances').pluck(),
    };
    this.recount();
  }

  commit(): void {
    this.overflowing.commit();
  }

  /** After a rollback or retention: the counts as the database has them. */
  recount(): void {
    this.overflowing.clear();
    this.services = this.statements.countServices.get() as number;
    this.instances = this.statements.countInstances.get() as number;
  }

  /** The resource as stored: the same object when its instance is known or still fits. */
  apply(resource: ResourceIdentity): ResourceIdentity {
    const key = instanceKey(resource);
    const stored = this.overflowing.get(key);
    if (stored !== undefined) return { ...resource, ...stored };
    if (this.known(resource.service, resource.instanceId)) return resource;
    let { service, instanceId } = resource;
    if (service !== null && service !== OVERFLOW_VALUE && this.statements.service.get(service) === undefined) {
      if (this.services < this.limits.maxServices) this.services++;
      else service = OVERFLOW_VALUE;
    }
    if (service === resource.service || !this.known(service, instanceId)) {
      if (this.instances >= this.limits.maxInstances) instanceId = OVERFLOW_VALUE;
      // The `_OTHER` row is one more when it is new (one per service at most).
      if (instanceId !== OVERFLOW_VALUE || !this.known(service, instanceId)) this.instances++;
    }
    if (service === resource.service && instanceId === resource.instanceId) return resource;
    this.overflowed++;
    this.overflowing.stage(key, { service, instanceId });
    return { ...resource, service, instanceId };
  }

  private known(service: string | null, instanceId: string | null): boolean {
    return this.statements.instance.get(identityHash(instanceKey({ service, instanceId }))) !== undefined;
  }
}
