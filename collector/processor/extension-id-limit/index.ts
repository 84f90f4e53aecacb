import { type MetricsBatch, type ResourceIdentity, SeriesKind } from '../../model/batches.js';
import type { MetricsConsumer, MetricsOutcome } from '../../model/consumer.js';
import { PermanentError } from '../../model/errors.js';
import { MS_PER_HOUR, NANOS_PER_HOUR } from '../../model/time.js';

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
  resource: ResourceIdentity;
  hour: number;
  known: Set<string> | undefined;
  ids: Set<string>;
}

/**
 * Bounds how many distinct extension ids an instance may report per UTC hour, so that a sender minting ids
 * cannot grow the store without limit: an export that would go past the limit is refused as a whole, and
 * adds nothing. The ids of an export that passed stay counted even if the store then fails it: its retry
 * brings the same ids, which count once. Memory is bounded: sets of the last few hours only, and at most
 * `maxRememberedIds` ids in all (forgetting the oldest sets can only let more ids through, never refuse one).
 */
export class ExtensionIdLimit implements MetricsConsumer<MetricsBatch> {
  /** By `${hour}:${instance}`, in insertion order (oldest first). */
  private readonly known = new Map<string, Set<string>>();
  private remembered = 0;
  private newestHour = Number.NEGATIVE_INFINITY;
  private readonly maxRemembered: number;

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
        if (point.dims.kind !== SeriesKind.Extension || id === null) continue;
        const hour = Number(point.timeNs / NANOS_PER_HOUR);
        const key = `${hour}:${instance}`;
        let entry = fresh.get(key);
        if (entry === undefined) fresh.set(key, (entry = { resource, hour, known: this.known.get(key), ids: new Set() }));
        if (entry.known?.has(id) !== true) entry.ids.add(id);
      }
    }
    for (const { resource, hour, known, ids } of fresh.values()) {
      const total = (known?.size ?? 0) + ids.size;
      if (total > this.config.maxIdsPerInstanceHour) {
        throw new PermanentError(
          `instance ${JSON.stringify(resource.instanceId)} of service ${JSON.stringify(resource.service)} would report ` +
            `${total} distinct extension ids in the hour starting ${new Date(hour * MS_PER_HOUR).toISOString()}; ` +
            `the limit is ${this.config.maxIdsPerInstanceHour}`,
          'too_many_extension_ids',
        );
      }
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
