import type pg from 'pg';
import { BOUNDED_DIMENSIONS } from '../common/dimension-limit-rule.js';
import { ROLLUP_LEVELS } from '../common/rollup-levels.js';
import { MAX_EXAMPLES, RetentionPasses, retentionCutoffs } from '../common/windows.js';
import type { RetentionConfig } from '../store.js';
import { inTransaction } from './connection.js';
import { BUMP_CLOSED_GENERATION, changesKeptParts } from '../common/closed-buckets.js';
import { FOLD_STEP } from '../common/session-fold.js';
import { nanosToMs } from '../../model/time.js';
import { foldSessions } from './session-fold.js';

/**
 * Drops what is past its window (common/windows.ts). Runs on one replica at a time (the service runs it under the
 * store's leadership). Old buckets are deleted by range: PostgreSQL's row versions let ingest go on meanwhile, and
 * ingest never writes buckets that old.
 */
export class Retention {
  private readonly passes = new RetentionPasses();
  private running: Promise<void> | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: () => number,
    private readonly retention: RetentionConfig,
  ) {}

  /** One pass; concurrent calls share it. */
  run(): Promise<void> {
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async stop(): Promise<void> {
    await this.running?.catch(() => undefined);
  }

  private async pass(): Promise<void> {
    const cutoffs = retentionCutoffs(this.clock(), this.retention);
    const dedupNs = cutoffs.dedupNs.toString();

    await inTransaction(this.pool, async (db) => {
      await db.query('DELETE FROM point_log WHERE end_ns < $1', [dedupNs]);
      await db.query('DELETE FROM extension_id_limits WHERE hour < $1', [cutoffs.idLimitHour]);
      // A folded session's points are all older than the dedup window by now: a late export of it is refused.
      await db.query('DELETE FROM folded_instances WHERE folded_ms < $1', [nanosToMs(cutoffs.dedupNs)]);
      await db.query('DELETE FROM alert_deliveries WHERE updated_at_ms < $1', [cutoffs.historyMs]);
      await db.query(
        'DELETE FROM alert_transitions WHERE (fingerprint, active_since_ms) IN (SELECT fingerprint, active_since_ms FROM alerts WHERE resolved_at_ms < $1)',
        [cutoffs.historyMs],
      );
      await db.query('DELETE FROM alerts WHERE resolved_at_ms < $1', [cutoffs.historyMs]);
      await db.query('DELETE FROM span_examples WHERE start_ms < $1', [cutoffs.examplesMs]);
      await db.query(`DELETE FROM span_examples WHERE id IN (SELECT id FROM span_examples ORDER BY start_ms DESC OFFSET ${MAX_EXAMPLES})`);
      // An older incarnation's baseline goes once its successor started before the dedup window.
      await db.query(
        `DELETE FROM cumulative_state AS old WHERE old.end_ns < $1
           AND EXISTS (SELECT 1 FROM cumulative_state AS newer
                       WHERE newer.stream_id = old.stream_id AND newer.start_ns > old.start_ns AND newer.start_ns < $1)`,
        [dedupNs],
      );
    });

    if (this.retention.endedSessionsMs !== undefined) {
      const cutoffMs = this.clock() - this.retention.endedSessionsMs;
      for (let step = FOLD_STEP; step === FOLD_STEP;) {
        step = await foldSessions(this.pool, this.clock(), cutoffMs);
        // Instance cell rollups moved: a closed part read before is not answered again.
        if (step > 0) await this.pool.query(BUMP_CLOSED_GENERATION);
      }
    }

    const due = this.passes.due(cutoffs);
    let keptPartsChanged = false;
    for (const { rollup, before } of due.levels) {
      const { rowCount } = await this.pool.query(`DELETE FROM ${rollup.table} WHERE ${rollup.bucket} < $1`, [before]);
      keptPartsChanged ||= (rowCount ?? 0) > 0 && changesKeptParts(rollup);
    }
    if (due.hour) keptPartsChanged = (await this.dropGoneInstances(cutoffs.silentInstancesMs)) || keptPartsChanged;
    // After the deletes: a closed part read while they ran is not answered again.
    if (keptPartsChanged) await this.pool.query(BUMP_CLOSED_GENERATION);
    if (due.minute) this.passes.minutePassDone(cutoffs);
    if (due.hour) this.passes.hourPassDone(cutoffs);
  }

  /** Instances silent for the whole hourly retention: their series, streams and history go too. Whether any went. */
  private async dropGoneInstances(cutoffMs: number): Promise<boolean> {
    return inTransaction(this.pool, async (db) => {
      // Locked first: an export of one of them arriving now waits, then finds it gone and creates it anew.
      const { rows } = await db.query<{ id: number }>('SELECT id FROM instances WHERE last_seen_ms < $1 ORDER BY key_hash FOR UPDATE', [cutoffMs]);
      if (rows.length === 0) return false;
      const ids = rows.map((row) => row.id);
      const series = 'SELECT id FROM series WHERE instance_ref = ANY($1::bigint[])';
      await db.query(`DELETE FROM cumulative_state WHERE stream_id IN (SELECT id FROM streams WHERE series_id IN (${series}))`, [ids]);
      await db.query(`DELETE FROM streams WHERE series_id IN (${series})`, [ids]);
      await db.query(`DELETE FROM series_minute WHERE series_id IN (${series})`, [ids]);
      await db.query(`DELETE FROM series_hour WHERE series_id IN (${series})`, [ids]);
      await db.query('DELETE FROM series WHERE instance_ref = ANY($1::bigint[])', [ids]);
      for (const rollup of ROLLUP_LEVELS.filter((level) => level.owner === 'instance_cell'))
        await db.query(`DELETE FROM ${rollup.table} WHERE ${rollup.ownerColumn} IN (SELECT id FROM instance_cells WHERE instance_ref = ANY($1::bigint[]))`, [
          ids,
        ]);
      await db.query('DELETE FROM instance_cells WHERE instance_ref = ANY($1::bigint[])', [ids]);
      await db.query('DELETE FROM advertised WHERE instance_ref = ANY($1::bigint[])', [ids]);
      await db.query('DELETE FROM advertised_counts WHERE instance_ref = ANY($1::bigint[])', [ids]);
      await db.query('DELETE FROM folded_instances WHERE target_ref = ANY($1::bigint[])', [ids]);
      await db.query('DELETE FROM instances WHERE id = ANY($1::bigint[])', [ids]);
      // Values no series keeps any more free their place under the dimension limit.
      for (const column of BOUNDED_DIMENSIONS) {
        await db.query(
          `DELETE FROM dimension_values WHERE dimension = '${column}' AND value NOT IN (SELECT ${column} FROM series WHERE ${column} IS NOT NULL)`,
        );
      }
      return true;
    });
  }
}
