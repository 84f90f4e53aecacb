import type pg from 'pg';
import type { MetricsBatch, ResourceIdentity } from '../../../model/batches.js';
import { Temporality } from '../../../model/batches.js';
import type { ApplyResult } from '../../../model/records.js';
import { type AdvertisementPlan, type AdvertisingState, mergeAdvertisements, planAdvertisements } from '../../common/advertisement-plan.js';
import { INSTANCE_UPSERT_COLUMNS, instanceValues } from '../../common/columns.js';
import { type InstanceEnding, nextEnding } from '../../common/ending-rule.js';
import { identityHash, instanceKey, streamKey } from '../../common/identity.js';
import { IngestPlan, type PlannedPoint, type StreamRef, needsStream } from '../../common/ingest-plan.js';
import { StoreUnavailableError } from '../../store.js';
import { type BatchedTransaction, type Queryable, inBatchedTransaction, inTransaction } from '../connection.js';
import { DimensionLimit } from './dimension-limit.js';
import { type NewStream, createStreams, lockSchema1Rekeying, schema1Stream } from './identities.js';
import { type StateKey, loadExport, loadStates } from './load.js';
import { ResourceLimit } from './resource-limit.js';
import { type InstanceWrite, writeExport } from './write.js';

/** An export whose instances (by resource index) are not stored: they are created first, in a transaction of their own. */
class MissingInstances extends Error {
  constructor(readonly resources: readonly number[]) {
    super('instances not stored yet');
  }
}

/** How often an export looks for its instances again after creating them (retention may drop them in between). */
const INSTANCE_ATTEMPTS = 3;

/**
 * Applies one metrics batch as the ingest plan decides (common/ingest-plan.ts), made safe for several replicas
 * writing at once: the state the plan needs is loaded under row locks, nothing is taken from this process's memory
 * (no id caches: another replica's retention may delete what a cache would still name).
 *
 * A steady export (its instance and streams stored) is two round trips: one statement that loads and locks what it
 * needs (load.ts), sent with the BEGIN, and one that writes everything (write.ts), sent with the COMMIT. An instance not stored yet is created
 * first, in a short transaction of its own (resource-limit.ts); new streams, series, cells and dimension values are
 * created inside the export's transaction (identities.ts), under no lock every export shares.
 *
 * Locks are taken in one order by every export, each kind in key order: instance rows, the locks of dimensions that
 * get a new value, new cells, series and streams, cumulative state rows, dedup keys in `point_log`, then the
 * advertisement rows of instances already locked. The rollups are not written here: the export's new increments are
 * appended to `pending_increments`, which the fold (fold.ts) adds to them, so exports do not queue on the rollup rows
 * every export of a minute shares.
 */
export class MetricsWriter {
  private readonly dimensionLimit: DimensionLimit;
  private readonly resourceLimit: ResourceLimit;

  constructor(
    private readonly clock: () => number,
    maxValuesPerDimension: number,
    maxInstances: number,
  ) {
    this.dimensionLimit = new DimensionLimit(maxValuesPerDimension);
    this.resourceLimit = new ResourceLimit({ maxServices: maxValuesPerDimension, maxInstances });
  }

  /** Instances stored under `_OTHER` by this collector since start. */
  get overflowedInstances(): number {
    return this.resourceLimit.overflowed;
  }

  /** Values folded into `_OTHER` by this collector since start. */
  get overflowedValues(): number {
    return this.dimensionLimit.overflowed;
  }

  /** Applies the batch in one transaction and commits. */
  async apply(pool: pg.Pool, batch: MetricsBatch): Promise<ApplyResult> {
    const now = this.clock();
    // Where each resource is stored: as sent, unless the instance limit decided otherwise when it was created.
    const stored = batch.resources.map((resourceBatch) => resourceBatch.resource);
    for (let attempt = 1; ; attempt++) {
      try {
        return await inBatchedTransaction(pool, (transaction) => this.applyStored(transaction, batch, stored, now));
      } catch (error) {
        if (!(error instanceof MissingInstances)) throw error;
        if (attempt === INSTANCE_ATTEMPTS)
          throw new StoreUnavailableError(`database: the export's instances were dropped ${attempt} times while it was applied`);
        const created = await inTransaction(pool, (db) =>
          this.resourceLimit.create(
            db,
            error.resources.map((index) => batch.resources[index]?.resource as ResourceIdentity),
            now,
          ),
        );
        error.resources.forEach((index, position) => (stored[index] = created[position] as ResourceIdentity));
      }
    }
  }

  private async applyStored(transaction: BatchedTransaction, batch: MetricsBatch, stored: readonly ResourceIdentity[], now: number): Promise<ApplyResult> {
    const resources = batch.resources.map((resourceBatch, index) => {
      const resource = stored[index] as ResourceIdentity;
      return { resourceBatch, resource, hex: identityHash(instanceKey(resource)).toString('hex') };
    });
    const counted = resources.flatMap(({ resourceBatch, resource, hex }) =>
      resourceBatch.counters
        .filter(needsStream)
        .map((point) => ({ point, resource, instanceHex: hex, hash: identityHash(streamKey(point.streamScope, point.streamAttributes)) })),
    );
    const streamHashes = new Map<string, Buffer>();
    const stateKeys = new Map<string, StateKey>();
    for (const { point, hash } of counted) {
      const hex = hash.toString('hex');
      streamHashes.set(hex, hash);
      if (point.temporality !== Temporality.Delta) stateKeys.set(`${hex}:${point.startNs}`, { streamHash: hash, startNs: point.startNs });
    }
    const instanceHexes = [...new Set(resources.map((entry) => entry.hex))];
    const loaded = await loadExport(
      transaction,
      instanceHexes.map((hex) => Buffer.from(hex, 'hex')),
      [...streamHashes.values()],
      [...stateKeys.values()],
    );
    const missing = resources.flatMap((entry, index) => (loaded.instances.has(entry.hex) ? [] : [index]));
    if (missing.length > 0) throw new MissingInstances(missing);

    await this.createMissing(transaction.client, counted, loaded);
    const entries = counted.map(({ point, hash, resource }): PlannedPoint => ({
      point,
      stream: loaded.streams.get(hash.toString('hex')) as StreamRef,
      service: resource.service,
    }));
    const plan = new IngestPlan();
    const planned = plan.points(entries, loaded.states);
    const inserted = await writeExport(transaction, now, planned.states, this.instanceWrites(resources, loaded.instances, now), planned.log);
    for (const row of inserted) plan.added(row.series_id, row.value);
    plan.logged(planned, inserted.length);
    return plan.result();
  }

  /** Streams not stored yet: created (or re-keyed from schema 1), and their cumulative states loaded and locked. */
  private async createMissing(
    db: Queryable,
    counted: readonly { point: PlannedPoint['point']; resource: ResourceIdentity; instanceHex: string; hash: Buffer }[],
    loaded: Awaited<ReturnType<typeof loadExport>>,
  ): Promise<void> {
    const fresh = new Map<string, NewStream>();
    for (const { point, resource, instanceHex, hash } of counted) {
      const hex = hash.toString('hex');
      if (loaded.streams.has(hex) || fresh.has(hex)) continue;
      const instance = loaded.instances.get(instanceHex);
      fresh.set(hex, { point, instanceId: instance?.id as number, service: resource.service, hash });
    }
    if (fresh.size === 0) return;
    const create: NewStream[] = [];
    const rekeying = await lockSchema1Rekeying(db);
    for (const [hex, entry] of [...fresh.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const legacy = rekeying ? await schema1Stream(db, entry.point, entry.hash) : undefined;
      if (legacy === undefined) create.push(entry);
      else loaded.streams.set(hex, legacy);
    }
    await createStreams(db, this.dimensionLimit, create, loaded.streams);
    const keys = new Map<string, { streamId: number; startNs: bigint }>();
    for (const { point, hash } of counted) {
      const hex = hash.toString('hex');
      if (point.temporality === Temporality.Delta || !fresh.has(hex)) continue;
      const streamId = (loaded.streams.get(hex) as StreamRef).streamId;
      keys.set(`${streamId}:${point.startNs}`, { streamId, startNs: point.startNs });
    }
    await loadStates(db, loaded.states, [...keys.values()]);
  }

  /**
   * Each instance row as the export leaves it: the resource values of its resources in turn (a value absent keeps the
   * one before), and what they advertise, planned in turn from the state the instance row holds (two resources of
   * one instance number their generations one after the other).
   */
  private instanceWrites(
    resources: readonly { resourceBatch: MetricsBatch['resources'][number]; resource: ResourceIdentity; hex: string }[],
    instances: Awaited<ReturnType<typeof loadExport>>['instances'],
    now: number,
  ): InstanceWrite[] {
    const writes = new Map<number, { values: Record<string, string | null>; state: AdvertisingState; plans: AdvertisementPlan[]; ending: InstanceEnding }>();
    for (const { resourceBatch, resource, hex } of resources) {
      const instance = instances.get(hex) as NonNullable<ReturnType<typeof instances.get>>;
      let write = writes.get(instance.id);
      if (write === undefined) {
        write = {
          values: {},
          state: { advertisedMs: instance.advertised_ms, generation: instance.advertise_gen },
          plans: [],
          ending: { endedMs: instance.ended_ms, clockMs: instance.clock_ms },
        };
        writes.set(instance.id, write);
      }
      write.ending = nextEnding(write.ending, resourceBatch, now);
      const values = instanceValues(resource);
      INSTANCE_UPSERT_COLUMNS.forEach((column, index) => (write.values[column] = values[index] ?? write.values[column] ?? null));
      const advertisements = planAdvertisements(resourceBatch, resource, write.state);
      if (advertisements === undefined) continue;
      write.plans.push(advertisements);
      write.state = advertisements.instance ?? write.state;
    }
    return [...writes.entries()].map(([id, write]) => ({
      id,
      values: write.values,
      ending: write.ending,
      advertisements: write.plans.length === 0 ? undefined : mergeAdvertisements(write.plans),
    }));
  }
}
