import type { CounterPoint } from '../../../model/batches.js';
import { type CumulativeState, convertCumulative } from '../../common/cumulative-rule.js';
import type { Queryable } from '../connection.js';

export interface CumulativePoint {
  streamId: number;
  point: CounterPoint;
}

const stateKey = (streamId: number, startNs: bigint): string => `${streamId}:${startNs}`;

/**
 * Cumulative → increment, per stream and start time, by the rule both stores share (store/cumulative-rule.ts).
 * Several replicas may receive consecutive exports of one stream, so the state is read and written
 * under its row lock: every state row the export touches is created if absent (as end −1, value 0, which
 * converts exactly as "no state") and locked FOR UPDATE, both in (stream, start) order so that two exports
 * never wait on each other in opposite orders; a concurrent export of the same stream waits for this one's
 * commit and then converts against its result.
 */
export class CumulativeConversion {
  /** Increments in point order; `undefined` where the point adds nothing (a retry or out of order). */
  async increments(db: Queryable, points: readonly CumulativePoint[]): Promise<(number | undefined)[]> {
    if (points.length === 0) return [];
    const keys = new Map<string, { streamId: number; startNs: bigint }>();
    for (const { streamId, point } of points) keys.set(stateKey(streamId, point.startNs), { streamId, startNs: point.startNs });
    const sorted = [...keys.values()].sort((a, b) => a.streamId - b.streamId || (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : 0));
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
    const states = new Map<string, CumulativeState>(rows.map((row) => [stateKey(row.stream_id, BigInt(row.start_ns)), { endNs: BigInt(row.end_ns), value: row.value }]));
    const increments: (number | undefined)[] = [];
    for (const { streamId, point } of points) {
      const key = stateKey(streamId, point.startNs);
      // A row created just now (end −1, value 0) converts as no state at all.
      const converted = convertCumulative(states.get(key) ?? { endNs: -1n, value: 0 }, point);
      increments.push(converted?.increment);
      if (converted !== undefined) states.set(key, converted.state);
    }
    const changed = sorted.map((key) => states.get(stateKey(key.streamId, key.startNs)) as CumulativeState);
    await db.query(
      `UPDATE cumulative_state c SET end_ns = k.e, value = k.v
       FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[]) AS k (s, st, e, v)
       WHERE c.stream_id = k.s AND c.start_ns = k.st AND (c.end_ns <> k.e OR c.value <> k.v)`,
      [streams, starts, changed.map((state) => state.endNs.toString()), changed.map((state) => state.value)],
    );
    return increments;
  }
}
