import type pg from 'pg';
import { MS_PER_DAY, MS_PER_HOUR, MS_PER_MINUTE, msToNanos } from '../../model/time.js';
import type { RetentionConfig } from '../store.js';
import { inTransaction } from './connection.js';

/** Upper bound on stored span examples, whatever the number of cells. */
const MAX_EXAMPLES = 200_000;
const DIMENSIONS = ['server_name', 'server_version', 'method', 'protocol_version', 'client_name', 'client_version', 'status_code'];

/**
 * Drops what is past its window, with the SQLite store's windows (sqlite/retention.ts). Runs on one replica at
 * a time (the service runs it under the store's leadership). Old buckets are deleted by range: PostgreSQL's
 * row versions let ingest go on meanwhile, and ingest never writes buckets that old. The minute pass runs when
 * the cutoff has moved an hour, the hour pass once a day (as remembered by this replica: another one that
 * takes over simply runs both once more, which deletes nothing twice).
 */
export class Retention {
  private minuteCutoffDone = Number.NEGATIVE_INFINITY;
  private hourCutoffDone = Number.NEGATIVE_INFINITY;
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
    const now = this.clock();
    const dedupCutoffNs = msToNanos(now - this.retention.dedupHours * MS_PER_HOUR).toString();
    const minuteCutoff = Math.floor((now - this.retention.minuteDays * MS_PER_DAY) / MS_PER_MINUTE);
    const hourCutoff = Math.floor((now - this.retention.hourDays * MS_PER_DAY) / MS_PER_HOUR);

    await inTransaction(this.pool, async (db) => {
      await db.query('DELETE FROM point_log WHERE end_ns < $1', [dedupCutoffNs]);
      // Hours wholly before the dedup window: their points are refused, so no decision about them is asked for.
      await db.query('DELETE FROM extension_id_limits WHERE hour < $1', [Math.floor((now - this.retention.dedupHours * MS_PER_HOUR) / MS_PER_HOUR)]);
      // The delivery log and resolved alerts are kept as long as the hourly rollups (as in the SQLite store).
      const historyCutoffMs = now - this.retention.hourDays * MS_PER_DAY;
      await db.query('DELETE FROM alert_deliveries WHERE updated_at_ms < $1', [historyCutoffMs]);
      await db.query(
        'DELETE FROM alert_transitions WHERE (fingerprint, active_since_ms) IN (SELECT fingerprint, active_since_ms FROM alerts WHERE resolved_at_ms < $1)',
        [historyCutoffMs],
      );
      await db.query('DELETE FROM alerts WHERE resolved_at_ms < $1', [historyCutoffMs]);
      await db.query('DELETE FROM span_examples WHERE start_ms < $1', [minuteCutoff * MS_PER_MINUTE]);
      await db.query(`DELETE FROM span_examples WHERE id IN (SELECT id FROM span_examples ORDER BY start_ms DESC OFFSET ${MAX_EXAMPLES})`);
      // An older incarnation's baseline goes once its successor started before the dedup window.
      await db.query(
        `DELETE FROM cumulative_state AS old WHERE old.end_ns < $1
           AND EXISTS (SELECT 1 FROM cumulative_state AS newer
                       WHERE newer.stream_id = old.stream_id AND newer.start_ns > old.start_ns AND newer.start_ns < $1)`,
        [dedupCutoffNs],
      );
    });

    if (minuteCutoff - this.minuteCutoffDone >= 60) {
      await this.pool.query('DELETE FROM series_minute WHERE minute < $1', [minuteCutoff]);
      await this.pool.query('DELETE FROM cell_minute WHERE minute < $1', [minuteCutoff]);
      this.minuteCutoffDone = minuteCutoff;
    }
    if (hourCutoff - this.hourCutoffDone >= 24) {
      await this.pool.query('DELETE FROM series_hour WHERE hour < $1', [hourCutoff]);
      await this.pool.query('DELETE FROM cell_hour WHERE hour < $1', [hourCutoff]);
      await this.pool.query('DELETE FROM cell_day WHERE day < $1', [Math.floor(hourCutoff / 24)]);
      await this.dropGoneInstances(hourCutoff * MS_PER_HOUR);
      this.hourCutoffDone = hourCutoff;
    }
  }

  /** Instances silent for the whole hourly retention: their series, streams and history go too. */
  private async dropGoneInstances(cutoffMs: number): Promise<void> {
    await inTransaction(this.pool, async (db) => {
      // Locked first: an export of one of them arriving now waits, then finds it gone and creates it anew.
      const { rows } = await db.query<{ id: number }>('SELECT id FROM instances WHERE last_seen_ms < $1 ORDER BY key_hash FOR UPDATE', [cutoffMs]);
      if (rows.length === 0) return;
      const ids = rows.map((row) => row.id);
      const series = 'SELECT id FROM series WHERE instance_ref = ANY($1::bigint[])';
      await db.query(`DELETE FROM cumulative_state WHERE stream_id IN (SELECT id FROM streams WHERE series_id IN (${series}))`, [ids]);
      await db.query(`DELETE FROM streams WHERE series_id IN (${series})`, [ids]);
      await db.query(`DELETE FROM series_minute WHERE series_id IN (${series})`, [ids]);
      await db.query(`DELETE FROM series_hour WHERE series_id IN (${series})`, [ids]);
      await db.query('DELETE FROM series WHERE instance_ref = ANY($1::bigint[])', [ids]);
      await db.query('DELETE FROM advertised WHERE instance_ref = ANY($1::bigint[])', [ids]);
      await db.query('DELETE FROM advertised_counts WHERE instance_ref = ANY($1::bigint[])', [ids]);
      await db.query('DELETE FROM instances WHERE id = ANY($1::bigint[])', [ids]);
      // Values no series keeps any more free their place under the dimension limit.
      for (const column of DIMENSIONS) {
        await db.query(`DELETE FROM dimension_values WHERE dimension = '${column}' AND value NOT IN (SELECT ${column} FROM series WHERE ${column} IS NOT NULL)`);
      }
    });
  }
}
