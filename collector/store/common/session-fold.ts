import { OVERFLOW_VALUE } from '../../../contract/index.js';
import type { InstanceIdentity, ResourceBatch, SeriesDims } from '../../model/batches.js';
import { type BuildIdentity, buildKey, buildLabel } from '../../model/build.js';
import { INSTANCE_COLUMNS } from './columns.js';
import { exportClockMs } from './ending-rule.js';
import { identityHash, instanceCellKey } from './identity.js';

/**
 * Ended sessions, folded: a stdio fleet starts a process, so an instance, per client session, and keeping each as an
 * instance of its own would fill `EXTSCOPE_MAX_INSTANCES` within days. Retention folds a session that ended (its last
 * export said so, or it fell silent) more than `EXTSCOPE_ENDED_TTL_MINUTES` ago into its build's *ended sessions*
 * row, one instance per build: its instance cells and their rollups are added to that row's (or moved there), its
 * series, streams and cumulative state go with them (a retried export still finds its streams, and counts once), and
 * its own row goes, leaving a small note (`folded_instances`) that sends a late export of it to the same row for as
 * long as it could still be a retry (the dedup window). The counts by client, service and build do not move; by
 * instance the session's counts are its build's "ended sessions" row. Both stores fold as decided here.
 *
 * Stored instances therefore stay bounded by the live ones and the sessions that ended recently; a sender that marks
 * its instances ended frees no place sooner than the keep time, the row a fold creates takes the place the session
 * leaves, and a note is not an instance (it goes after the dedup window, or with its row).
 */

/** An `instances` row as a fold reads it (`SELECT *`): the identity columns, and these. */
export interface SessionRow extends Record<string, unknown> {
  id: number;
  key_hash: Buffer;
  first_seen_ms: number;
  last_seen_ms: number;
  ended_ms: number | null;
  clock_ms: number | null;
}

/** A session's identity, from its stored row. */
export function sessionIdentity(session: SessionRow): InstanceIdentity {
  return Object.fromEntries(INSTANCE_COLUMNS.map((column) => [column.key, session[column.column] ?? null])) as InstanceIdentity;
}

/** A folded row's clock: no export is newer, so an export sent to it never makes it run again (ending-rule.ts). */
export const FOLDED_CLOCK_MS = Number.MAX_SAFE_INTEGER;

/**
 * The SQL condition (over `instances`, the cutoff bound as `cutoff`) for the sessions to fold: processes that served
 * one client session over stdio, ended or silent since before the cutoff; never an ended-sessions row, nor an
 * `_OTHER` row (it stands for instances the limit turned away, and may be any of them).
 */
export const foldableSql = (cutoff: string): string =>
  `transport = 'stdio' AND ended_sessions IS NULL AND coalesce(instance_id, '') <> '${OVERFLOW_VALUE}' AND coalesce(service, '') <> '${OVERFLOW_VALUE}' AND coalesce(ended_ms, last_seen_ms) < ${cutoff}`;

/**
 * Sessions folded per transaction: a retention pass folds a backlog in steps, between exports (and, on PostgreSQL,
 * between folds of pending increments, whose lock a step holds).
 */
export const FOLD_STEP = 50;

/** The ended-sessions row of a session's build: its identity (the instance id names the build) and the values stored with it. */
export function endedSessionsRow(session: InstanceIdentity): { identity: InstanceIdentity; values: (string | null)[] } {
  const build: BuildIdentity = session;
  // A digest of the build's key keeps rows of builds that read alike (a label is not unique) apart.
  const digest = identityHash(buildKey(build)).toString('hex').slice(0, 8);
  const identity: InstanceIdentity = { ...session, instanceId: `ended sessions of ${buildLabel(build)} (#${digest})`, transport: 'stdio' };
  return { identity, values: [...INSTANCE_COLUMNS.map((column) => identity[column.key]), buildKey(build)] };
}

/**
 * A session's instance cells against its build row's: those the row has (same columns) are added to it, the others
 * move to it as they are. Rows: `[id, dims]` as each store reads them.
 */
export function pairInstanceCells(
  session: readonly [number, Readonly<SeriesDims>][],
  target: readonly [number, Readonly<SeriesDims>][],
): { merge: [from: number, to: number][]; move: number[] } {
  const byKey = new Map(target.map(([id, dims]) => [instanceCellKey(0, dims), id]));
  const merge: [number, number][] = [];
  const move: number[] = [];
  for (const [id, dims] of session) {
    const to = byKey.get(instanceCellKey(0, dims));
    if (to === undefined) move.push(id);
    else merge.push([id, to]);
  }
  return { merge, move };
}

/**
 * Whether an export of an instance no longer stored, folded into its build row (its note's `clock_ms`), goes to that
 * row: a retry or a late export (no newer than the session's last) does; newer points are a process started again
 * under the same id, a new instance.
 */
export function goesToFoldedRow(noteClockMs: number | null, batch: ResourceBatch): boolean {
  const clockMs = exportClockMs(batch);
  return clockMs === null || (noteClockMs !== null && clockMs <= noteClockMs);
}
