import type Database from 'better-sqlite3';
import type { CumulativeState } from '../../common/cumulative-rule.js';
import { type PlannedPoint, type StateWrite, StreamStarts } from '../../common/ingest-plan.js';
import { Temporality } from '../../../model/batches.js';

/**
 * The cumulative conversion state (one row per stream and sender start time), loaded for the points of an apply
 * and written as the ingest plan moves it. It lives in the database only (memory does not grow with streams); its
 * size is counted for /metrics.
 */
export class CumulativeStates {
  private readonly select: Database.Statement;
  private readonly upsert: Database.Statement;
  private readonly count: Database.Statement;
  /** State rows, kept in step with inserts; re-read after a rollback or retention. */
  size: number;

  constructor(db: Database.Database) {
    this.select = db.prepare('SELECT end_ns AS endNs, value FROM cumulative_state WHERE stream_id = ? AND start_ns = ?').safeIntegers(true);
    this.upsert = db.prepare(`
      INSERT INTO cumulative_state (stream_id, start_ns, end_ns, value) VALUES (?, ?, ?, ?)
      ON CONFLICT (stream_id, start_ns) DO UPDATE SET end_ns = excluded.end_ns, value = excluded.value`);
    this.count = db.prepare('SELECT count(*) FROM cumulative_state').pluck();
    this.size = this.recount();
  }

  /** The stored state of every cumulative point's (stream, start time). Inside the apply transaction. */
  load(entries: readonly PlannedPoint[]): StreamStarts<CumulativeState> {
    const states = new StreamStarts<CumulativeState>();
    for (const { point, stream } of entries) {
      if (point.temporality === Temporality.Delta || states.has(stream.streamId, point.startNs)) continue;
      const stored = this.select.get(stream.streamId, point.startNs) as { endNs: bigint; value: bigint } | undefined;
      if (stored !== undefined) states.add(stream.streamId, point.startNs, { endNs: stored.endNs, value: Number(stored.value) });
    }
    return states;
  }

  /** Inside the apply transaction. */
  write(writes: readonly StateWrite[]): void {
    for (const { streamId, startNs, state, created } of writes) {
      this.upsert.run(streamId, startNs, state.endNs, state.value);
      if (created) this.size++;
    }
  }

  recount(): number {
    this.size = this.count.get() as number;
    return this.size;
  }
}
