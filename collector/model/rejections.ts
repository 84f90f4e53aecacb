/**
 * Data points refused one by one (an OTLP partial success): why, and from which service. The reason is a closed
 * set (a label on `/metrics`, a key the query API explains); the service is the sender's, as received.
 */

export const REJECTED_REASONS = {
  no_instance_identity:
    'cumulative points without service.instance.id, and without host.name and process.pid to tell processes apart: ' +
    "two processes' running totals would be taken for one stream",
  no_start_time: 'cumulative points without service.instance.id need start_time_unix_nano: a restart that gets the same pid could not be told apart',
  too_old: 'points older than the dedup window: a retry of them could no longer be recognised',
  count_too_large: 'cumulative points whose increment was beyond the per-minute bound of a stream: taken as a new baseline, not counted',
} as const;

export type RejectedReason = keyof typeof REJECTED_REASONS;

export interface RejectedPoints {
  reason: RejectedReason;
  service: string | null;
  points: number;
}

/** Adds `points` to `list`, one entry per reason and service (an export has a handful of resources: a scan is enough). */
export function addRejected(list: RejectedPoints[], reason: RejectedReason, service: string | null, points = 1): void {
  if (points <= 0) return;
  const entry = list.find((item) => item.reason === reason && item.service === service);
  if (entry === undefined) list.push({ reason, service, points });
  else entry.points += points;
}

/** The points in `list`. */
export function rejectedCount(list: readonly RejectedPoints[]): number {
  let total = 0;
  for (const item of list) total += item.points;
  return total;
}
