import type { CumulativeState } from '../../common/cumulative-rule.js';
import { type PlannedPoint, type StateWrite, StreamStarts } from '../../common/ingest-plan.js';
import { Temporality } from '../../../model/batches.js';
import type { Queryable } from '../connection.js';

interface StateKey {
  streamId: number;
  startNs: bigint;
}

/**
 * The cumulative conversion state, loaded for an export's points and written as the ingest plan moves it. Several
 * replicas may receive consecutive exports of one stream, so it is read and written under its row lock: every
 * state row the export touches is created if absent (as end −1, value 0, read back as no state) and locked FOR
 * UPDATE, both in (stream, start) order so that two exports never wait on each other in opposite orders; a
 * concurrent export of the same stream waits for this one's commit and then converts against its result.
 */
export class CumulativeStates {
  /** The stored state of every cumulative point's (stream, start time), each row locked until the transaction ends. */
  async load(db: Queryable, entries: readonly PlannedPoint[]): Promise<StreamStarts<CumulativeState>> {
    const states = new StreamStarts<CumulativeState>();
    const keys = new StreamStarts<StateKey>();
    for (const { point, stream } of entries) {
      if (point.temporality !== Temporality.Delta && !keys.has(stream.streamId, point.startNs))
        keys.add(stream.streamId, point.startNs, { streamId: stream.streamId, startNs: point.startNs });
    }
    const sorted = [...keys.values()];
    if (sorted.length === 0) return states;
    sorted.sort((a, b) => a.streamId - b.streamId || (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : 0));
    const streams = sorted.map((key) => key.streamId);
    const starts = sorted.map((key) => key.startNs.toString());
    await db.query(
      `INSERT INTO cumulative_state (stream_id, start_ns, end_ns, value)
       SELECT s, st, -1, 0 FROM unnest($1::bigint[], $2::bigint[]) AS k (s, st) ORDER BY s, st
       ON CONFLICT (stream_id, start_ns) DO NOTHING`,
      [streams, starts],
    );
    const { rows } = await db.query<{ stream_id: number; start_ns: string; end_ns: string; value: number }>(
      `SELECT c.stream_id, c.start_ns::text AS start_ns, c.end_ns::text AS end_ns, c.value FROM cumulative_state c
       JOIN unnest($1::bigint[], $2::bigint[]) AS k (s, st) ON c.stream_id = k.s AND c.start_ns = k.st
       ORDER BY c.stream_id, c.start_ns FOR UPDATE OF c`,
      [streams, starts],
    );
    // A row created just now (end −1) is no state at all.
    for (const row of rows) if (row.end_ns !== '-1') states.add(row.stream_id, BigInt(row.start_ns), { endNs: BigInt(row.end_ns), value: row.value });
    return states;
  }

  /** The rows are there and locked ({@link load}): one statement moves them all. */
  async write(db: Queryable, writes: readonly StateWrite[]): Promise<void> {
    if (writes.length === 0) return;
    await db.query(
      `UPDATE cumulative_state c SET end_ns = k.e, value = k.v
       FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[]) AS k (s, st, e, v)
       WHERE c.stream_id = k.s AND c.start_ns = k.st`,
      [
        writes.map((write) => write.streamId),
        writes.map((write) => write.startNs.toString()),
        writes.map((write) => write.state.endNs.toString()),
        writes.map((write) => write.state.value),
      ],
    );
  }
}
