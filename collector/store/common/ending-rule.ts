import type { ResourceBatch } from '../../model/batches.js';
import { nanosToMs } from '../../model/time.js';

/**
 * When an instance ended, decided by the sender's own clock, not by the order its exports arrive in. A periodic
 * export sent before a process's last one may arrive after it (a retry, a slow network, a second exporter): it is
 * older than the last export by the times its points carry, and leaves the instance ended. A process started again
 * under the same `service.instance.id` sends points newer than that last export: the instance runs again.
 */

/** Where an instance's lifetime stands, as its row keeps it (`ended_ms`, `clock_ms`). */
export interface InstanceEnding {
  /** When its last export arrived (the collector's clock); null while it runs. */
  endedMs: number | null;
  /** The newest time its exports' points carry (the sender's clock, ms); null before any dated point. */
  clockMs: number | null;
}

/** The newest time one resource of an export carries (its counters, gauges and `extscope.process.ended`), or null. */
export function exportClockMs(batch: ResourceBatch): number | null {
  let newest = batch.endedMs ?? Number.NEGATIVE_INFINITY;
  // The newest counter time first, converted once: a division of a bigint per point cost more than the comparison.
  let newestNs: bigint | undefined;
  for (const point of batch.counters) if (newestNs === undefined || point.timeNs > newestNs) newestNs = point.timeNs;
  if (newestNs !== undefined) newest = Math.max(newest, nanosToMs(newestNs));
  for (const point of batch.advertised) newest = Math.max(newest, point.timeMs);
  for (const point of batch.advertisedCounts) newest = Math.max(newest, point.timeMs);
  return newest === Number.NEGATIVE_INFINITY ? null : newest;
}

/**
 * The instance's lifetime after one resource of an export arrived at `now`. Its last export ends the instance unless
 * the instance has already sent something newer (a process started again under the same id); a retried last export
 * (as new as the newest before it) keeps the first arrival's time. Any other export runs it again only when it is newer than everything before (the
 * last export included; a tie is the same collection split in two, the last export's other half). An export with no
 * dated point says nothing of when it was sent and changes nothing.
 */
export function nextEnding(stored: InstanceEnding, batch: ResourceBatch, now: number): InstanceEnding {
  const clockMs = exportClockMs(batch);
  if (clockMs === null) return stored;
  const newer = stored.clockMs === null || clockMs > stored.clockMs;
  const newest = newer ? clockMs : (stored.clockMs as number);
  if (batch.endedMs !== undefined) {
    if (newer) return { endedMs: now, clockMs: newest };
    return { endedMs: clockMs === stored.clockMs ? (stored.endedMs ?? now) : stored.endedMs, clockMs: newest };
  }
  return { endedMs: newer ? null : stored.endedMs, clockMs: newest };
}

/** Whether the row must be written (an export that moves neither leaves it as it is). */
export function endingChanged(stored: InstanceEnding, next: InstanceEnding): boolean {
  return stored.endedMs !== next.endedMs || stored.clockMs !== next.clockMs;
}
