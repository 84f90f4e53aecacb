import type pg from 'pg';
import type { MetricsBatch, ResourceIdentity } from '../../../model/batches.js';
import { Temporality } from '../../../model/batches.js';
import type { ApplyResult } from '../../../model/records.js';
import { type AdvertisementPlan, type AdvertisingState, mergeAdvertisements, planAdvertisements } from '../../common/advertisement-plan.js';
import { INSTANCE_UPSERT_COLUMNS, instanceValues } from '../../common/columns.js';
import { type InstanceEnding, nextEnding } from '../../common/ending-rule.js';
import { identityHash, instanceKey } from '../../common/identity.js';
import {
  IngestPlan,
  type LogRow,
  type PlannedPoint,
  type PointsPlan,
  type StateWrite,
  type StreamRef,
  StreamStarts,
  needsStream,
} from '../../common/ingest-plan.js';
import { StoreUnavailableError } from '../../store.js';
import { type BatchedTransaction, type Queryable, inBatchedTransaction, inTransaction } from '../connection.js';
import { DimensionLimit } from './dimension-limit.js';
import { GroupCommit } from './group-commit.js';
import { type NewStream, createStreams, lockSchema1Rekeying, schema1Stream } from './identities.js';
import { type KnownStream, KnownStreams } from './known-streams.js';
import { type StateKey, loadExport, loadStates } from './load.js';
import { ResourceLimit } from './resource-limit.js';
import { type InstanceWrite, writeExport } from './write.js';

/** Resources (by export and resource index) whose instances are not stored: they are created first, in a transaction of their own. */
class MissingInstances extends Error {
  constructor(readonly resources: readonly { exportIndex: number; resourceIndex: number }[]) {
    super('instances not stored yet');
  }
}

/** How often an export looks for its instances again after creating them (retention may drop them in between). */
const INSTANCE_ATTEMPTS = 3;

/**
 * Transactions in flight at once per collector, and the points (counters and advertisements) one may hold: exports
 * arriving meanwhile wait for the next one and share it (group-commit.ts).
 */
const GROUP_LIMITS = { inFlight: 2, maxWeight: 5000 };

/** Stream keys remembered (their hashes, the series last stored for them), as many as the SQLite writer's stream cache holds. */
const KNOWN_STREAMS = 200_000;

/** An export waiting to be written: when it arrived, and where each of its resources is stored. */
interface PendingExport {
  batch: MetricsBatch;
  now: number;
  /** As sent, unless the instance limit decided otherwise when the instance was created. */
  stored: ResourceIdentity[];
}

/** A resource of a group's export, with where it is stored and its instance's key hash (hex). */
interface GroupResource {
  exportIndex: number;
  resourceBatch: MetricsBatch['resources'][number];
  resource: ResourceIdentity;
  hex: string;
}

/** A point of a group's export that needs its stream. */
interface CountedPoint {
  point: PlannedPoint['point'];
  resource: ResourceIdentity;
  instanceHex: string;
  stream: KnownStream;
}

/**
 * Which export of a group logs each row first, by the row's identity in `point_log` (stream, start, end): by stream
 * and start, then a short list of ends, with no key text made per row.
 */
class LogOwners {
  private readonly byStart = new StreamStarts<{ endNs: bigint; owner: number }[]>();

  /** Records `owner` for the row unless an export logged it first; whether `owner` is the first. */
  claim(streamId: number, startNs: bigint, endNs: bigint, owner: number): boolean {
    const ends = this.byStart.get(streamId, startNs);
    if (ends === undefined) this.byStart.add(streamId, startNs, [{ endNs, owner }]);
    else if (ends.some((entry) => entry.endNs === endNs)) return false;
    else ends.push({ endNs, owner });
    return true;
  }

  owner(streamId: number, startNs: bigint, endNs: bigint): number {
    return this.byStart.get(streamId, startNs)?.find((entry) => entry.endNs === endNs)?.owner as number;
  }
}

/**
 * Applies metrics batches as the ingest plan decides (common/ingest-plan.ts), made safe for several replicas
 * writing at once: the state the plan needs is loaded under row locks, nothing is taken from this process's memory
 * (no id caches: another replica's retention may delete what a cache would still name; what a stream key hashes to,
 * and a series' dimensions once the database names that series again, are kept: known-streams.ts).
 *
 * Exports that arrive while a transaction is in flight are written together in the next one (group commit,
 * group-commit.ts): each is planned on its own, in arrival order, from the state the ones before it in the group
 * left, and answered after the commit that holds it. A failure of the database fails every export of the
 * transaction (their senders retry it, and the dedup keys keep each point once); any other failure is retried
 * export by export, so that it fails only the export it is about.
 *
 * A steady transaction (its instances and streams stored) is two round trips: one statement that loads and locks
 * what it needs (load.ts), sent with the BEGIN, and one that writes everything (write.ts), sent with the COMMIT. An
 * instance not stored yet is created first, in a short transaction of its own (resource-limit.ts); new streams,
 * series, cells and dimension values are created inside the transaction (identities.ts), under no lock every
 * export shares.
 *
 * Locks are taken in one order by every transaction, each kind in key order: instance rows, the locks of
 * dimensions that get a new value, new cells, series and streams, cumulative state rows, dedup keys in
 * `point_log`, then the advertisement rows of instances already locked. The rollups are not written here: new
 * increments are appended to `pending_increments`, which the fold (fold.ts) adds to them, so exports do not queue
 * on the rollup rows every export of a minute shares.
 */
export class MetricsWriter {
  private readonly dimensionLimit: DimensionLimit;
  private readonly resourceLimit: ResourceLimit;
  private readonly groups: GroupCommit<PendingExport, PromiseSettledResult<ApplyResult>>;
  private readonly knownStreams = new KnownStreams(KNOWN_STREAMS);

  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: () => number,
    maxValuesPerDimension: number,
    maxInstances: number,
  ) {
    this.dimensionLimit = new DimensionLimit(maxValuesPerDimension);
    this.resourceLimit = new ResourceLimit({ maxServices: maxValuesPerDimension, maxInstances });
    this.groups = new GroupCommit(
      (group) => this.applyGroup(group),
      ({ batch }) =>
        batch.resources.reduce((sum, resource) => sum + resource.counters.length + resource.advertised.length + resource.advertisedCounts.length, 0),
      GROUP_LIMITS,
    );
  }

  /** Instances stored under `_OTHER` by this collector since start. */
  get overflowedInstances(): number {
    return this.resourceLimit.overflowed;
  }

  /** Values folded into `_OTHER` by this collector since start. */
  get overflowedValues(): number {
    return this.dimensionLimit.overflowed;
  }

  /** Applies the batch, alone or with others that arrive meanwhile, and resolves after the commit that holds it. */
  async apply(batch: MetricsBatch): Promise<ApplyResult> {
    const settled = await this.groups.submit({ batch, now: this.clock(), stored: batch.resources.map((resourceBatch) => resourceBatch.resource) });
    if (settled.status === 'rejected') throw settled.reason;
    return settled.value;
  }

  /** One transaction for the group; when it fails for a reason other than the database, one for each export. */
  private async applyGroup(group: readonly PendingExport[]): Promise<PromiseSettledResult<ApplyResult>[]> {
    try {
      return (await this.applyTogether(group)).map((value) => ({ status: 'fulfilled', value }));
    } catch (error) {
      if (group.length === 1 || error instanceof StoreUnavailableError) throw error;
    }
    const settled: PromiseSettledResult<ApplyResult>[] = [];
    for (const pending of group) {
      settled.push(
        await this.applyTogether([pending]).then(
          ([value]) => ({ status: 'fulfilled', value: value as ApplyResult }),
          (reason: unknown) => ({ status: 'rejected', reason }),
        ),
      );
    }
    return settled;
  }

  /** The exports in one transaction, committed; their instances not stored yet are created first. */
  private async applyTogether(group: readonly PendingExport[]): Promise<ApplyResult[]> {
    const now = group.reduce((latest, pending) => Math.max(latest, pending.now), Number.NEGATIVE_INFINITY);
    for (let attempt = 1; ; attempt++) {
      try {
        return await inBatchedTransaction(this.pool, (transaction) => this.applyStored(transaction, group, now));
      } catch (error) {
        if (!(error instanceof MissingInstances)) throw error;
        if (attempt === INSTANCE_ATTEMPTS)
          throw new StoreUnavailableError(`database: the export's instances were dropped ${attempt} times while it was applied`);
        const created = await inTransaction(this.pool, (db) =>
          this.resourceLimit.create(
            db,
            error.resources.map(({ exportIndex, resourceIndex }) => group[exportIndex]?.batch.resources[resourceIndex] as MetricsBatch['resources'][number]),
            now,
          ),
        );
        error.resources.forEach(({ exportIndex, resourceIndex }, position) => {
          (group[exportIndex] as PendingExport).stored[resourceIndex] = created[position] as ResourceIdentity;
        });
      }
    }
  }

  private async applyStored(transaction: BatchedTransaction, group: readonly PendingExport[], now: number): Promise<ApplyResult[]> {
    const resources: GroupResource[] = [];
    const positions: { exportIndex: number; resourceIndex: number }[] = [];
    const counted: CountedPoint[][] = group.map(() => []);
    const streams = new Map<string, KnownStream>();
    const stateKeys = new Map<string, StateKey>();
    const instanceHashes = new Map<string, Buffer>();
    group.forEach((pending, exportIndex) => {
      pending.batch.resources.forEach((resourceBatch, resourceIndex) => {
        const resource = pending.stored[resourceIndex] as ResourceIdentity;
        const instanceHash = identityHash(instanceKey(resource));
        const hex = instanceHash.toString('hex');
        instanceHashes.set(hex, instanceHash);
        resources.push({ exportIndex, resourceBatch, resource, hex });
        for (const point of resourceBatch.counters) {
          if (!needsStream(point)) continue;
          const stream = this.knownStreams.get(point.streamScope, point.streamAttributes);
          streams.set(stream.hex, stream);
          if (point.temporality !== Temporality.Delta) stateKeys.set(`${stream.hex}:${point.startNs}`, { streamHash: stream.hash, startNs: point.startNs });
          (counted[exportIndex] as CountedPoint[]).push({ point, resource, instanceHex: hex, stream });
        }
        positions.push({ exportIndex, resourceIndex });
      });
    });
    const loaded = await loadExport(transaction, [...instanceHashes.values()], [...streams.values()], [...stateKeys.values()]);
    const notStored = positions.filter((_entry, index) => !loaded.instances.has((resources[index] as GroupResource).hex));
    if (notStored.length > 0) throw new MissingInstances(notStored);

    await this.createMissing(transaction.client, counted.flat(), loaded);
    // Each export planned in turn from the states the ones before it left; one write per state row, its last.
    const changed = new StreamStarts<StateWrite>();
    const stateWrites: StateWrite[] = [];
    const states = {
      get: (streamId: number, startNs: bigint) => changed.get(streamId, startNs)?.state ?? loaded.states.get(streamId, startNs),
      has: (streamId: number, startNs: bigint) => changed.has(streamId, startNs) || loaded.states.has(streamId, startNs),
    };
    const plans = group.map(() => new IngestPlan());
    const log: LogRow[] = [];
    /** Which export each row of `log` is from. */
    const logOwners: number[] = [];
    // When there are several exports, a row another export of the group logs first is a duplicate.
    const owners = group.length === 1 ? undefined : new LogOwners();
    const planned = plans.map((plan, exportIndex) => {
      const entries = (counted[exportIndex] as CountedPoint[]).map(({ point, stream, resource }): PlannedPoint => ({
        point,
        stream: loaded.streams.get(stream.hex) as StreamRef,
        service: resource.service,
      }));
      const points = plan.points(entries, states);
      for (const write of points.states) {
        const earlier = changed.get(write.streamId, write.startNs);
        if (earlier !== undefined) earlier.state = write.state;
        else {
          const own = { ...write };
          changed.add(write.streamId, write.startNs, own);
          stateWrites.push(own);
        }
      }
      for (const row of points.log) {
        if (owners !== undefined && !owners.claim(row.streamId, row.startNs, row.endNs, exportIndex)) continue;
        log.push(row);
        logOwners.push(exportIndex);
      }
      return points;
    });
    const taken = await writeExport(transaction, now, stateWrites, this.instanceWrites(group, resources, loaded.instances), log);
    const insertedBy = group.map(() => 0);
    const take = (exportIndex: number, seriesId: number, value: number): void => {
      (plans[exportIndex] as IngestPlan).added(seriesId, value);
      insertedBy[exportIndex] = (insertedBy[exportIndex] as number) + 1;
    };
    if (taken.rows === undefined) log.forEach((row, index) => take(logOwners[index] as number, row.seriesId, row.value));
    else
      for (const [streamId, endNs, startNs, seriesId, value] of taken.rows)
        take(owners === undefined ? 0 : owners.owner(streamId, BigInt(startNs), BigInt(endNs)), seriesId, value);
    return plans.map((plan, exportIndex) => {
      plan.logged(planned[exportIndex] as PointsPlan, insertedBy[exportIndex] as number);
      return plan.result();
    });
  }

  /** Streams not stored yet: created (or re-keyed from schema 1), and their cumulative states loaded and locked. */
  private async createMissing(db: Queryable, counted: readonly CountedPoint[], loaded: Awaited<ReturnType<typeof loadExport>>): Promise<void> {
    const fresh = new Map<string, NewStream & { known: KnownStream }>();
    for (const { point, resource, instanceHex, stream } of counted) {
      if (loaded.streams.has(stream.hex) || fresh.has(stream.hex)) continue;
      const instance = loaded.instances.get(instanceHex);
      fresh.set(stream.hex, { point, instanceId: instance?.id as number, service: resource.service, hash: stream.hash, known: stream });
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
    for (const [hex, { known }] of fresh) known.stored = loaded.streams.get(hex);
    const keys = new Map<string, { streamId: number; startNs: bigint }>();
    for (const { point, stream } of counted) {
      if (point.temporality === Temporality.Delta || !fresh.has(stream.hex)) continue;
      const streamId = (loaded.streams.get(stream.hex) as StreamRef).streamId;
      keys.set(`${streamId}:${point.startNs}`, { streamId, startNs: point.startNs });
    }
    await loadStates(db, loaded.states, [...keys.values()]);
  }

  /**
   * Each instance row as the group leaves it: the resource values of its resources in turn (a value absent keeps the
   * one before), when it ended (common/ending-rule.ts, each resource at its export's arrival), and what they
   * advertise, planned in turn from the state the instance row holds (two resources of one instance number their
   * generations one after the other).
   */
  private instanceWrites(
    group: readonly PendingExport[],
    resources: readonly GroupResource[],
    instances: Awaited<ReturnType<typeof loadExport>>['instances'],
  ): InstanceWrite[] {
    const writes = new Map<number, { values: Record<string, string | null>; state: AdvertisingState; plans: AdvertisementPlan[]; ending: InstanceEnding }>();
    for (const { exportIndex, resourceBatch, resource, hex } of resources) {
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
      write.ending = nextEnding(write.ending, resourceBatch, (group[exportIndex] as PendingExport).now);
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
