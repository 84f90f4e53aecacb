import type Database from 'better-sqlite3';
import type { ResourceBatch, ResourceIdentity } from '../../../model/batches.js';
import { goesToFoldedRow } from '../../common/session-fold.js';
import { identityHash, instanceKey } from '../../common/identity.js';
import { StagedCache } from './staged-cache.js';
import { type ResourceLimits, limitResource, resourceCandidates } from '../../common/resource-limits.js';

/**
 * Loads what the resource limit (common/resource-limits.ts) needs: service names and instance ids are what a
 * sender controls through its resource (every process, every stdio session mints one). Known instances are the
 * rows of `instances`, so the decision is the database's and the same after a restart; retention's dropping of
 * silent instances frees their places. The counts are kept in memory, in step with the rows this connection (the
 * only one) adds. Runs inside the apply transaction; after a rollback the counts are read again ({@link recount}).
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
      folded: db.prepare(
        'SELECT f.clock_ms AS clockMs, i.service, i.instance_id AS instanceId FROM folded_instances f JOIN instances i ON i.id = f.target_ref WHERE f.key_hash = ?',
      ),
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

  /**
   * The batch's resource as stored: the same object when its instance is known or still fits; a session folded into
   * its build's row (common/session-fold.ts) is stored there while its exports are no newer than its last.
   */
  apply(batch: ResourceBatch): ResourceIdentity {
    const resource = batch.resource;
    const key = instanceKey(resource);
    const stored = this.overflowing.get(key);
    if (stored !== undefined) return { ...resource, ...stored };
    if (this.known(resource)) return resource;
    const folded = this.statements.folded.get(identityHash(key)) as { clockMs: number | null; service: string | null; instanceId: string | null } | undefined;
    if (folded !== undefined && goesToFoldedRow(folded.clockMs, batch)) return { ...resource, service: folded.service, instanceId: folded.instanceId };
    const knownInstances = new Set(
      resourceCandidates(resource)
        .filter((candidate) => this.known(candidate))
        .map(instanceKey),
    );
    const serviceKnown = resource.service !== null && this.statements.service.get(resource.service) !== undefined;
    const { service, instanceId, newService, newInstance } = limitResource(
      resource,
      { knownInstances, serviceKnown, services: this.services, instances: this.instances },
      this.limits,
    );
    if (newService) this.services++;
    if (newInstance) this.instances++;
    if (service === resource.service && instanceId === resource.instanceId) return resource;
    this.overflowed++;
    this.overflowing.stage(key, { service, instanceId });
    return { ...resource, service, instanceId };
  }

  private known(instance: Pick<ResourceIdentity, 'service' | 'instanceId'>): boolean {
    return this.statements.instance.get(identityHash(instanceKey(instance))) !== undefined;
  }
}
