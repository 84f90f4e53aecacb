import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { BOUNDED_DIMENSIONS } from '../common/dimension-limit-rule.js';
import { ROLLUP_LEVELS } from '../common/rollup-levels.js';
import { MAX_EXAMPLES, RetentionPasses, retentionCutoffs } from '../common/windows.js';
import { FOLD_STEP } from '../common/session-fold.js';
import { nanosToMs } from '../../model/time.js';
import type { RetentionConfig } from '../store.js';
import { BUMP_CLOSED_GENERATION, changesKeptParts } from '../common/closed-buckets.js';
import { SessionFold } from './session-fold.js';

/**
 * Owners per transaction: a few milliseconds of seeks, about as long as one chunk of a read. A read sharing the thread
 * with a pass (the first one runs as the collector starts, over every owner) waits for one such chunk between each of
 * its own, not for one ten times its length.
 */
const CHUNK = 250;

/**
 * Drops what is past its window (common/windows.ts). Rollup tables are keyed by (owner, bucket), which keeps reads
 * to one seek per owner; old buckets are therefore deleted owner by owner, in chunks that yield to the event loop so
 * that ingest keeps flowing.
 */
export class Retention {
  private readonly passes = new RetentionPasses();
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly statements;
  private readonly sessions: SessionFold;

  constructor(
    private readonly db: Database.Database,
    private readonly clock: () => number,
    private readonly retention: RetentionConfig,
    /** Called after deleting rows that in-memory caches or counts refer to: state rows only, or whole instances. */
    private readonly deleted: (what: 'cumulative_state' | 'instances') => void,
    /** Runs one transaction of this pass between the store's other writes (an apply may be open across turns of the event loop). */
    private readonly exclusive: <T>(work: () => T) => Promise<T>,
  ) {
    this.sessions = new SessionFold(db);
    this.statements = {
      // Never a row the fold has not reached.
      pointLog: db.prepare("DELETE FROM point_log WHERE end_ns < ? AND seq <= (SELECT value FROM meta WHERE key = 'folded_seq')"),
      supersededState: db.prepare(`
        DELETE FROM cumulative_state AS old WHERE old.end_ns < @cutoff
          AND EXISTS (SELECT 1 FROM cumulative_state AS newer
                      WHERE newer.stream_id = old.stream_id AND newer.start_ns > old.start_ns AND newer.start_ns < @cutoff)`),
      oldExamples: db.prepare('DELETE FROM span_examples WHERE start_ms < ?'),
      // Hours wholly before the dedup window: their points are refused, so no decision about them is asked for.
      oldIdLimits: db.prepare('DELETE FROM extension_id_limits WHERE hour < ?'),
      // A folded session's points are all older than the dedup window by now: a late export of it is refused.
      oldFoldNotes: db.prepare('DELETE FROM folded_instances WHERE folded_ms < ?'),
      excessExamples: db.prepare(`
        DELETE FROM span_examples WHERE id IN (SELECT id FROM span_examples ORDER BY start_ms DESC LIMIT -1 OFFSET ${MAX_EXAMPLES})`),
      seriesIds: db.prepare('SELECT id FROM series WHERE id > ? ORDER BY id LIMIT ?').pluck(),
      cellIds: db.prepare('SELECT id FROM cells WHERE id > ? ORDER BY id LIMIT ?').pluck(),
      instanceCellIds: db.prepare('SELECT id FROM instance_cells WHERE id > ? ORDER BY id LIMIT ?').pluck(),
      levels: new Map(
        ROLLUP_LEVELS.map((rollup) => [rollup, db.prepare(`DELETE FROM ${rollup.table} WHERE ${rollup.ownerColumn} = ? AND ${rollup.bucket} < ?`)]),
      ),
      goneInstances: db.prepare('SELECT id FROM instances WHERE last_seen_ms < ?').pluck(),
      dropInstanceState: db.prepare(
        'DELETE FROM cumulative_state WHERE stream_id IN (SELECT st.id FROM streams st JOIN series s ON s.id = st.series_id WHERE s.instance_ref = ?)',
      ),
      dropInstanceStreams: db.prepare('DELETE FROM streams WHERE series_id IN (SELECT id FROM series WHERE instance_ref = ?)'),
      dropInstanceSeriesMinutes: db.prepare('DELETE FROM series_minute WHERE series_id IN (SELECT id FROM series WHERE instance_ref = ?)'),
      dropInstanceSeriesHours: db.prepare('DELETE FROM series_hour WHERE series_id IN (SELECT id FROM series WHERE instance_ref = ?)'),
      dropInstanceSeries: db.prepare('DELETE FROM series WHERE instance_ref = ?'),
      dropInstanceCellLevels: ROLLUP_LEVELS.filter((rollup) => rollup.owner === 'instance_cell').map((rollup) =>
        db.prepare(`DELETE FROM ${rollup.table} WHERE ${rollup.ownerColumn} IN (SELECT id FROM instance_cells WHERE instance_ref = ?)`),
      ),
      dropInstanceCells: db.prepare('DELETE FROM instance_cells WHERE instance_ref = ?'),
      dropInstanceAdvertised: db.prepare('DELETE FROM advertised WHERE instance_ref = ?'),
      dropInstanceCounts: db.prepare('DELETE FROM advertised_counts WHERE instance_ref = ?'),
      dropInstanceNotes: db.prepare('DELETE FROM folded_instances WHERE target_ref = ?'),
      dropInstance: db.prepare('DELETE FROM instances WHERE id = ?'),
      closedBucketsChanged: db.prepare(BUMP_CLOSED_GENERATION),
      unusedDimensionValues: BOUNDED_DIMENSIONS.map((column) =>
        db.prepare(`DELETE FROM dimension_values WHERE dimension = '${column}' AND value NOT IN (SELECT ${column} FROM series WHERE ${column} IS NOT NULL)`),
      ),
    };
  }

  /** One pass; concurrent calls share it. */
  run(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.running ??= this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Ends a running pass at its next chunk (the database is about to close). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running?.catch(() => undefined);
  }

  private async pass(): Promise<void> {
    const cutoffs = retentionCutoffs(this.clock(), this.retention);
    const s = this.statements;

    const superseded = await this.exclusive(
      this.db.transaction(() => {
        s.pointLog.run(cutoffs.dedupNs);
        s.oldExamples.run(cutoffs.examplesMs);
        s.oldIdLimits.run(cutoffs.idLimitHour);
        s.oldFoldNotes.run(nanosToMs(cutoffs.dedupNs));
        s.excessExamples.run();
        // An older incarnation's baseline goes once its successor started before the dedup window: any point of
        // the old one is then older than the window and refused anyway.
        return s.supersededState.run({ cutoff: cutoffs.dedupNs }).changes;
      }),
    );
    if (superseded > 0) this.deleted('cumulative_state');
    if (this.retention.endedSessionsMs !== undefined) await this.foldSessions(this.clock() - this.retention.endedSessionsMs);

    const due = this.passes.due(cutoffs);
    const owners = { series: s.seriesIds, cell: s.cellIds, instance_cell: s.instanceCellIds };
    let keptPartsChanged = false;
    for (const [owner, ids] of Object.entries(owners)) {
      const levels = due.levels.filter(({ rollup }) => rollup.owner === owner);
      if (levels.length > 0 && !this.stopped)
        keptPartsChanged =
          (await this.perOwner(
            ids,
            levels.map(({ rollup, before }) => [s.levels.get(rollup) as Database.Statement, before, changesKeptParts(rollup)]),
          )) || keptPartsChanged;
    }
    if (this.stopped) return;
    if (due.hour) keptPartsChanged = (await this.exclusive(() => this.dropGoneInstances(cutoffs.silentInstancesMs))) || keptPartsChanged;
    // After the deletes: a closed part read while they ran is not answered again.
    if (keptPartsChanged) await this.exclusive(() => s.closedBucketsChanged.run());
    if (due.minute) this.passes.minutePassDone(cutoffs);
    if (due.hour) this.passes.hourPassDone(cutoffs);
  }

  /** Whether a delete marked as changing kept closed parts (the third of each pair) removed a row. */
  private async perOwner(ids: Database.Statement, deletes: [Database.Statement, number, boolean][]): Promise<boolean> {
    let changed = false;
    let after = 0;
    while (!this.stopped) {
      const chunk = ids.all(after, CHUNK) as number[];
      if (chunk.length === 0) break;
      changed =
        (await this.exclusive(
          this.db.transaction(() => {
            let removed = false;
            for (const id of chunk) for (const [statement, cutoff, counts] of deletes) removed = (statement.run(id, cutoff).changes > 0 && counts) || removed;
            return removed;
          }),
        )) || changed;
      after = chunk[chunk.length - 1] ?? after;
      await yieldToEventLoop();
    }
    return changed;
  }

  /** Sessions that ended before `cutoffMs`, folded a step at a time between exports (common/session-fold.ts). */
  private async foldSessions(cutoffMs: number): Promise<void> {
    for (let step = FOLD_STEP; step === FOLD_STEP && !this.stopped;) {
      step = await this.exclusive(() => {
        const folded = this.sessions.foldStep(this.clock(), cutoffMs);
        if (folded > 0) {
          // Before the next export: caches may name the sessions' rows, and a closed part read before holds their cells.
          this.deleted('instances');
          this.statements.closedBucketsChanged.run();
        }
        return folded;
      });
      await yieldToEventLoop();
    }
  }

  /** Instances silent for the whole hourly retention: their series, streams and history go too. Whether any went. */
  private dropGoneInstances(cutoffMs: number): boolean {
    const s = this.statements;
    const gone = s.goneInstances.all(cutoffMs) as number[];
    if (gone.length === 0) return false;
    this.db.transaction(() => {
      for (const id of gone) {
        s.dropInstanceState.run(id);
        s.dropInstanceStreams.run(id);
        s.dropInstanceSeriesMinutes.run(id);
        s.dropInstanceSeriesHours.run(id);
        s.dropInstanceSeries.run(id);
        for (const statement of s.dropInstanceCellLevels) statement.run(id);
        s.dropInstanceCells.run(id);
        s.dropInstanceAdvertised.run(id);
        s.dropInstanceCounts.run(id);
        s.dropInstanceNotes.run(id);
        s.dropInstance.run(id);
      }
      // Values no series keeps any more free their place under the dimension limit.
      for (const statement of s.unusedDimensionValues) statement.run();
    })();
    this.deleted('instances');
    return true;
  }
}
