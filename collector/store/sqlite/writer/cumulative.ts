import type Database from 'better-sqlite3';
import type { CounterPoint } from '../../../model/batches.js';
import { convertCumulative } from '../../common/cumulative-rule.js';

/**
 * Cumulative → increment, per stream and start time (one state row per sender incarnation, so that a late
 * point from before a restart still lands against its own baseline), by the rule in store/cumulative-rule.ts.
 * The state lives in the database only (memory does not grow with streams); its size is counted for /metrics.
 */
export class CumulativeConversion {
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

  /** Must run inside the apply transaction. `undefined`: the point adds nothing (a retry or out of order). */
  increment(streamId: number, point: CounterPoint): number | undefined {
    const stored = this.select.get(streamId, point.startNs) as { endNs: bigint; value: bigint } | undefined;
    const converted = convertCumulative(stored === undefined ? undefined : { endNs: stored.endNs, value: Number(stored.value) }, point);
    if (converted === undefined) return undefined;
    if (stored === undefined) this.size++;
    this.upsert.run(streamId, point.startNs, converted.state.endNs, converted.state.value);
    return converted.increment;
  }

  recount(): number {
    this.size = this.count.get() as number;
    return this.size;
  }
}
