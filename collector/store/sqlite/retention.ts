import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE, msToNanos } from '../../model/time.js';
import type { RetentionConfig } from '../store.js';

const CHUNK = 2000;
/** Upper bound on stored span examples, whatever the number of cells. */
const MAX_EXAMPLES = 200_000;

/**
 * Drops what is past its window. Rollup tables are keyed by (owner, bucket), which keeps reads to one seek
 * per owner; old buckets are therefore deleted owner by owner, in chunks that yield to the event loop so that
 * ingest keeps flowing. The minute pass runs when the cutoff has moved an hour, the hour pass once a day.
 */
export class Retention {
  private minuteCutoffDone = Number.NEGATIVE_INFINITY;
  private hourCutoffDone = Number.NEGATIVE_INFINITY;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly statements;

  constructor(
    private readonly db: Database.Database,
    private readonly clock: () => number,
    private readonly retention: RetentionConfig,
    /** Called after deleting rows that in-memory caches or counts refer to: state rows only, or whole instances. */
    private readonly deleted: (what: 'cumulative_state' | 'instances') => void,
    /** Runs one transaction of this pass between the store's other writes (an apply may be open across turns of the event loop). */
    private readonly exclusive: <T>(work: () => T) => Promise<T>,
  ) {
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
      excessExamples: db.prepare(`
        DELETE FROM span_examples WHERE id IN (SELECT id FROM span_examples ORDER BY start_ms DESC LIMIT -1 OFFSET ${MAX_EXAMPLES})`),
      seriesIds: db.prepare('SELECT id FROM series WHERE id > ? ORDER BY id LIMIT ?').pluck(),
      cellIds: db.prepare('SELECT id FROM cells WHERE id > ? ORDER BY id LIMIT ?').pluck(),
      seriesMinute: db.prepare('DELETE FROM series_minute WHERE series_id = ? AND minute < ?'),
      seriesHour: db.prepare('DELETE FROM series_hour WHERE series_id = ? AND hour < ?'),
      cellMinute: db.prepare('DELETE FROM cell_minute WHERE cell_id = ? AND minute < ?'),
      cellHour: db.prepare('DELETE FROM cell_hour WHERE cell_id = ? AND hour < ?'),
      cellDay: db.prepare('DELETE FROM cell_day WHERE cell_id = ? AND day < ?'),
      goneInstances: db.prepare('SELECT id FROM instances WHERE last_seen_ms < ?').pluck(),
      dropInstanceState: db.prepare('DELETE FROM cumulative_state WHERE stream_id IN (SELECT st.id FROM streams st JOIN series s ON s.id = st.series_id WHERE s.instance_ref = ?)'),
      dropInstanceStreams: db.prepare('DELETE FROM streams WHERE series_id IN (SELECT id FROM series WHERE instance_ref = ?)'),
      dropInstanceSeriesMinutes: db.prepare('DELETE FROM series_minute WHERE series_id IN (SELECT id FROM series WHERE instance_ref = ?)'),
      dropInstanceSeriesHours: db.prepare('DELETE FROM series_hour WHERE series_id IN (SELECT id FROM series WHERE instance_ref = ?)'),
      dropInstanceSeries: db.prepare('DELETE FROM series WHERE instance_ref = ?'),
      dropInstanceAdvertised: db.prepare('DELETE FROM advertised WHERE instance_ref = ?'),
      dropInstanceCounts: db.prepare('DELETE FROM advertised_counts WHERE instance_ref = ?'),
      dropInstance: db.prepare('DELETE FROM instances WHERE id = ?'),
      unusedDimensionValues: ['server_name', 'server_version', 'method', 'protocol_version', 'client_name', 'client_version', 'status_code'].map((column) =>
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
    const now = this.clock();
    const s = this.statements;
    const dedupCutoffNs = msToNanos(now - this.retention.dedupHours * MS_PER_HOUR);
    const minuteCutoff = Math.floor((now - this.retention.minuteDays * MS_PER_DAY) / MS_PER_MINUTE);
    const hourCutoff = Math.floor((now - this.retention.hourDays * MS_PER_DAY) / MS_PER_HOUR);

    const superseded = await this.exclusive(this.db.transaction(() => {
      s.pointLog.run(dedupCutoffNs);
      s.oldExamples.run(minuteCutoff * MS_PER_MINUTE);
      s.oldIdLimits.run(Math.floor((now - this.retention.dedupHours * MS_PER_HOUR) / MS_PER_HOUR));
      s.excessExamples.run();
      // An older incarnation's baseline goes once its successor started before the dedup window: any point of
      // the old one is then older than the window and refused anyway.
      return s.supersededState.run({ cutoff: dedupCutoffNs }).changes;
    }));
    if (superseded > 0) this.deleted('cumulative_state');

    if (minuteCutoff - this.minuteCutoffDone >= 60 && !this.stopped) {
      await this.perOwner(s.seriesIds, [[s.seriesMinute, minuteCutoff]]);
      await this.perOwner(s.cellIds, [[s.cellMinute, minuteCutoff]]);
      if (!this.stopped) this.minuteCutoffDone = minuteCutoff;
    }
    if (hourCutoff - this.hourCutoffDone >= 24 && !this.stopped) {
      await this.perOwner(s.seriesIds, [[s.seriesHour, hourCutoff]]);
      await this.perOwner(s.cellIds, [
        [s.cellHour, hourCutoff],
        [s.cellDay, Math.floor(hourCutoff / 24)],
      ]);
      if (this.stopped) return;
      await this.exclusive(() => this.dropGoneInstances(hourCutoff * MS_PER_HOUR));
      this.hourCutoffDone = hourCutoff;
    }
  }

  private async perOwner(ids: Database.Statement, deletes: [Database.Statement, number][]): Promise<void> {
    let after = 0;
    while (!this.stopped) {
      const chunk = ids.all(after, CHUNK) as number[];
      if (chunk.length === 0) return;
      await this.exclusive(
        this.db.transaction(() => {
          for (const id of chunk) for (const [statement, cutoff] of deletes) statement.run(id, cutoff);
        }),
      );
      after = chunk[chunk.length - 1] ?? after;
      await yieldToEventLoop();
    }
  }

  /** Instances silent for the whole hourly retention: their series, streams and history go too. */
  private dropGoneInstances(cutoffMs: number): void {
    const s = this.statements;
    const gone = s.goneInstances.all(cutoffMs) as number[];
    if (gone.length === 0) return;
    this.db.transaction(() => {
      for (const id of gone) {
        s.dropInstanceState.run(id);
        s.dropInstanceStreams.run(id);
        s.dropInstanceSeriesMinutes.run(id);
        s.dropInstanceSeriesHours.run(id);
        s.dropInstanceSeries.run(id);
        s.dropInstanceAdvertised.run(id);
        s.dropInstanceCounts.run(id);
        s.dropInstance.run(id);
      }
      // Values no series keeps any more free their place under the dimension limit.
      for (const statement of s.unusedDimensionValues) statement.run();
    })();
    this.deleted('instances');
  }
}
