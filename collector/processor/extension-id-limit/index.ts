import { OVERFLOW_VALUE } from '../../../contract/index.js';
import { type CounterPoint, type MetricsBatch, SeriesKind } from '../../model/batches.js';
import type { MetricsConsumer, MetricsOutcome } from '../../model/consumer.js';
import { NANOS_PER_HOUR } from '../../model/time.js';

export interface ExtensionIdLimitConfig {
  /** Distinct extension ids one instance may report within one UTC hour. */
  maxIdsPerInstanceHour: number;
  /** Ids remembered in memory at most, over all (instance, hour) sets; the oldest sets go first (and are read again from `state`). */
  maxRememberedIds?: number;
}

/**
 * Where the admitted ids are kept across restarts: the store's `ExtensionIdLimitStore` (store/store.ts), passed
 * in by the service; a processor does not import the store, so the shape is repeated here.
 */
export interface AdmittedIdsState {
  /** The store decides the room left, atomically against any other collector on it (ExtensionIdLimitStore.admitIdsWithin). */
  admitIdsWithin(
    entries: readonly { instance: string; hour: number; ids: readonly string[] }[],
    max: number,
  ): Promise<{ instance: string; hour: number; ids: readonly string[] }[]>;
}

/** Hours behind the newest one seen that are still kept in memory (points within the dedup window, clock skew). */
const HOURS_KEPT = 8;
const DEFAULT_REMEMBERED_IDS = 1_000_000;

interface Fresh {
  instance: string;
  hour: number;
  known: Set<string> | undefined;
  ids: Set<string>;
  /** Points by id, for the ids that do not fit. */
  points: Map<string, CounterPoint[]>;
}

/**
 * Bounds how many distinct extension ids an instance may report per UTC hour, so that a sender minting ids
 * cannot grow the store without limit: ids past the limit (in the order they come) are counted under the
 * overflow id `_OTHER`, as the agent does, and the rest of the export is stored as usual (counted in
 * {@link overflowed}).
 *
 * The admitted ids are written to `state` before the export goes on to the store, and an (instance, hour) not in
 * memory is decided by it (in the one call that admits, which answers with the whole set: one round trip to a
 * database per new set): a retry after a restart is decided as the first attempt was (an id that went to
 * `_OTHER` goes there again, and its points are recognised as duplicates, not counted a second time under their
 * own id). Ids admitted for an export the store then fails stay admitted: its retry brings the same ids, which
 * count once. Decisions are made one export at a time, so that two exports of one instance cannot both take the
 * last places. Memory is bounded: sets of the last few hours only, and at most `maxRememberedIds` ids in all.
 * Without `state` (tests), memory is all there is: forgetting then lets more ids through, never refuses one.
 */
export class ExtensionIdLimit implements MetricsConsumer<MetricsBatch> {
  /** By `${hour}:${instance}`, in insertion order (oldest first). */
  private readonly known = new Map<string, Set<string>>();
  private remembered = 0;
  private newestHour = Number.NEGATIVE_INFINITY;
  private readonly maxRemembered: number;
  private queue: Promise<unknown> = Promise.resolve();
  /** Points counted under `_OTHER` since start. */
  overflowed = 0;

  constructor(
    private readonly config: ExtensionIdLimitConfig,
    private readonly next: MetricsConsumer<MetricsBatch>,
    private readonly state?: AdmittedIdsState,
  ) {
    this.maxRemembered = config.maxRememberedIds ?? DEFAULT_REMEMBERED_IDS;
  }

  async consumeMetrics(batch: MetricsBatch): Promise<MetricsOutcome> {
    const admitted = this.queue.then(() => this.admit(batch));
    this.queue = admitted.catch(() => undefined);
    await admitted;
    return this.next.consumeMetrics(batch);
  }

  private async admit(batch: MetricsBatch): Promise<void> {
    const fresh = new Map<string, Fresh>();
    for (const { resource, counters } of batch.resources) {
      const instance = JSON.stringify([resource.service, resource.instanceId]);
      // The points of a resource nearly all carry one time: its (instance, hour) is looked up once per time seen.
      let entryTimeNs: bigint | undefined;
      let entry: Fresh | undefined;
      for (const point of counters) {
        const id = extensionIdOf(point);
        if (id === undefined) continue;
        if (entry === undefined || point.timeNs !== entryTimeNs) {
          const hour = Number(point.timeNs / NANOS_PER_HOUR);
          const key = `${hour}:${instance}`;
          entry = fresh.get(key);
          if (entry === undefined) fresh.set(key, (entry = { instance, hour, known: this.known.get(key), ids: new Set(), points: new Map() }));
          entryTimeNs = point.timeNs;
        }
        if (entry.known?.has(id) === true) continue;
        entry.ids.add(id);
        let points = entry.points.get(id);
        if (points === undefined) entry.points.set(id, (points = []));
        points.push(point);
      }
    }
    if (this.state !== undefined) return this.admitInStore(this.state, fresh);
    // Without a store (tests), memory is all there is, and decides.
    for (const entry of fresh.values()) {
      const room = this.config.maxIdsPerInstanceHour - (entry.known?.size ?? 0);
      if (entry.ids.size <= room) continue;
      const admitted = new Set<string>();
      for (const id of entry.ids) {
        if (admitted.size < Math.max(room, 0)) {
          admitted.add(id);
          continue;
        }
        this.overflow(entry.points.get(id));
      }
      entry.ids = admitted;
    }
    const entries = [...fresh.values()].filter((entry) => entry.ids.size > 0);
    for (const { instance, hour, known, ids } of entries) this.add(`${hour}:${instance}`, hour, known, ids);
    this.evict();
  }

  /**
   * Memory knows which ids are admitted but not how much room is left (with several collectors on one store,
   * another may have taken it): ids not known here (every id of a set not in memory) are decided by the store, and
   * what it answers (the whole set, other collectors' ids and ids admitted before a restart too) is remembered. Kept before the store sees the export: a failure here fails the
   * export (retryable), and memory stays as it was.
   */
  private async admitInStore(state: AdmittedIdsState, fresh: Map<string, Fresh>): Promise<void> {
    const entries = [...fresh.values()].filter((entry) => entry.ids.size > 0);
    if (entries.length === 0) return;
    const decided = new Map<string, Set<string>>();
    for (const { instance, hour, ids } of await state.admitIdsWithin(
      entries.map(({ instance, hour, ids }) => ({ instance, hour, ids: [...ids] })),
      this.config.maxIdsPerInstanceHour,
    )) {
      decided.set(`${hour}:${instance}`, new Set(ids));
    }
    for (const entry of entries) {
      const admitted = decided.get(`${entry.hour}:${entry.instance}`) ?? new Set<string>();
      for (const id of entry.ids) if (!admitted.has(id)) this.overflow(entry.points.get(id));
      const known = entry.known ?? this.known.get(`${entry.hour}:${entry.instance}`);
      const added = new Set([...admitted].filter((id) => known?.has(id) !== true));
      this.add(`${entry.hour}:${entry.instance}`, entry.hour, known, added);
    }
    this.evict();
  }

  /** An id that does not fit: its points are counted under `_OTHER`. */
  private overflow(points: readonly CounterPoint[] | undefined): void {
    for (const point of points ?? []) {
      point.dims = { ...point.dims, extensionId: OVERFLOW_VALUE };
      // A stream of its own: the sender's stream keeps counting under its id in an hour where it fits.
      point.streamAttributes = `${point.streamAttributes}\u0000${OVERFLOW_VALUE}`;
      this.overflowed++;
    }
  }

  private add(key: string, hour: number, known: Set<string> | undefined, ids: Set<string>): void {
    if (known === undefined) this.remember(key, hour, ids);
    else for (const id of ids) known.add(id);
    this.remembered += ids.size;
  }

  private remember(key: string, hour: number, ids: Set<string>): void {
    if (hour > this.newestHour) {
      this.newestHour = hour;
      // Once per new hour: drop the sets of hours no point can fall in any more.
      for (const [old, set] of this.known) {
        if (Number(old.slice(0, old.indexOf(':'))) >= hour - HOURS_KEPT) continue;
        this.known.delete(old);
        this.remembered -= set.size;
      }
    }
    this.known.set(key, ids);
  }

  private evict(): void {
    for (const [old, set] of this.known) {
      if (this.remembered <= this.maxRemembered) return;
      this.known.delete(old);
      this.remembered -= set.size;
    }
  }
}

/** The id an extension point is limited by; undefined for points the limit does not apply to. */
function extensionIdOf(point: CounterPoint): string | undefined {
  const id = point.dims.extensionId;
  if (point.dims.kind !== SeriesKind.Extension || id === null || id === OVERFLOW_VALUE) return undefined;
  return id;
}
