import { OVERFLOW_VALUE } from '../../../contract/index.js';
import { type CounterPoint, type MetricsBatch, SeriesKind } from '../../model/batches.js';
import type { MetricsConsumer, MetricsOutcome } from '../../model/consumer.js';
import { NANOS_PER_HOUR } from '../../model/time.js';

export interface ExtensionIdLimitConfig {
  /** Distinct extension ids one instance may report within one UTC hour. */
  maxIdsPerInstanceHour: number;
  /** Ids remembered at most, over all (instance, hour) sets; the oldest sets go first. */
  maxRememberedIds?: number;
}

/** Hours behind the newest one seen that are still remembered (points within the dedup window, clock skew). */
const HOURS_KEPT = 8;
const DEFAULT_REMEMBERED_IDS = 1_000_000;

interface Fresh {
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
 * {@link overflowed}). The ids of an export that passed stay counted even if the store then fails it: its
 * retry brings the same ids, which count once. Memory is bounded: sets of the last few hours only, and at most
 * `maxRememberedIds` ids in all (forgetting the oldest sets can only let more ids through, never refuse one).
 */
export class ExtensionIdLimit implements MetricsConsumer<MetricsBatch> {
  /** By `${hour}:${instance}`, in insertion order (oldest first). */
  private readonly known = new Map<string, Set<string>>();
  private remembered = 0;
  private newestHour = Number.NEGATIVE_INFINITY;
  private readonly maxRemembered: number;
  /** Points counted under `_OTHER` since start. */
  overflowed = 0;

  constructor(
    private readonly config: ExtensionIdLimitConfig,
    private readonly next: MetricsConsumer<MetricsBatch>,
  ) {
    this.maxRemembered = config.maxRememberedIds ?? DEFAULT_REMEMBERED_IDS;
  }

  async consumeMetrics(batch: MetricsBatch): Promise<MetricsOutcome> {
    this.admit(batch);
    return this.next.consumeMetrics(batch);
  }

  private admit(batch: MetricsBatch): void {
    const fresh = new Map<string, Fresh>();
    for (const { resource, counters } of batch.resources) {
      const instance = JSON.stringify([resource.service, resource.instanceId]);
      for (const point of counters) {
        const id = point.dims.extensionId;
        if (point.dims.kind !== SeriesKind.Extension || id === null || id === OVERFLOW_VALUE) continue;
        const hour = Number(point.timeNs / NANOS_PER_HOUR);
        const key = `${hour}:${instance}`;
        let entry = fresh.get(key);
        if (entry === undefined) fresh.set(key, (entry = { hour, known: this.known.get(key), ids: new Set(), points: new Map() }));
        if (entry.known?.has(id) === true) continue;
        entry.ids.add(id);
        let points = entry.points.get(id);
        if (points === undefined) entry.points.set(id, (points = []));
        points.push(point);
      }
    }
    for (const entry of fresh.values()) {
      const room = this.config.maxIdsPerInstanceHour - (entry.known?.size ?? 0);
      if (entry.ids.size <= room) continue;
      const admitted = new Set<string>();
      for (const id of entry.ids) {
        if (admitted.size < room) {
          admitted.add(id);
          continue;
        }
        for (const point of entry.points.get(id) ?? []) {
          point.dims = { ...point.dims, extensionId: OVERFLOW_VALUE };
          // A stream of its own: the sender's stream keeps counting under its id in an hour where it fits.
          point.streamAttributes = `${point.streamAttributes}\u0000${OVERFLOW_VALUE}`;
          this.overflowed++;
        }
      }
      entry.ids = admitted;
    }
    for (const [key, { hour, known, ids }] of fresh) {
      if (ids.size === 0) continue;
      if (known === undefined) this.remember(key, hour, ids);
      else for (const id of ids) known.add(id);
      this.remembered += ids.size;
    }
    this.evict();
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
