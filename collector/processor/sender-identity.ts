import { ATTR_PROCESS_PID } from '../../contract/index.js';
import type { KeyValue } from '../otlp/messages.js';
import { signedInteger } from '../otlp/values.js';

/**
 * Which process sent a resource's points, when it does not say (no `service.instance.id`).
 *
 * Cumulative totals are only exact when two processes' totals are never taken for one stream: each would look like
 * a reset of the other, and counts would be lost or counted twice. The collector keys a stream by its whole
 * resource (every attribute), its scope, metric and point attributes, and keeps its cumulative state per stream
 * *and start time*. So a sender without an instance id is still told apart exactly when its resource carries
 * what differs between processes running at once, and every point carries its start time:
 *
 * - `host.name` and `process.pid` (the OpenTelemetry Node.js SDK's default resource has both; no two processes
 *   running at once share them) tell apart concurrent processes: their streams differ.
 * - the point's `start_time_unix_nano` tells apart the lives of one pid (a restart that gets the same pid, as
 *   PID 1 in a container does): each start has its own state row, so a restart counts from zero and a late retry
 *   of the previous life still lands against that life's total. A cumulative point with no start time (0) from
 *   such a sender is refused: a restart with the same pid could not be recognised.
 *
 * A sender with neither an instance id nor both of `host.name` and `process.pid` cannot be told apart from another
 * process of its service: its cumulative points are refused (partial success; counted by reason and service).
 * Delta points need no identity to add up and are kept in every case.
 *
 * The instance such a sender is shown as is {@link derivedInstanceId}: `pid:<pid>@<host.name>`, the same for
 * every export of the process, and visibly not an id the sender chose (the `pid:` mark). It names the process,
 * not one life of it: a start time cannot be part of it, since each stream has its own (the Node.js SDK dates a
 * stream from its first collection) and an instance must be one name for all of a process's streams and its
 * advertised extensions. A restart that gets the same pid on the same host is therefore shown as the same
 * instance, as a restarted container keeps its name; its counts stay exact all the same.
 */
export function derivedInstanceId(host: string | null, pid: number | undefined): string | null {
  if (host === null || host === '' || pid === undefined) return null;
  return `pid:${pid}@${host}`;
}

/** `process.pid` as the semantic conventions type it (an int); anything else is no pid. */
export function processPid(attributes: readonly KeyValue[]): number | undefined {
  for (const attribute of attributes) {
    if (attribute.key !== ATTR_PROCESS_PID) continue;
    const raw = attribute.value?.intValue;
    if (raw === null || raw === undefined) return undefined;
    const pid = signedInteger(raw);
    return Number.isSafeInteger(pid) && pid >= 0 ? pid : undefined;
  }
  return undefined;
}
