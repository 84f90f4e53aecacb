import type Database from 'better-sqlite3';
import { type DeliveryRow, MAX_DELIVERY_ERROR_LENGTH, deliveryRecord } from '../common/rows.js';
import {
  type DeliveryEntry,
  type DeliveryLogStore,
  type DeliveryQuery,
  type DeliveryRecord,
  UNFINISHED_DELIVERY_STATES,
  type UnfinishedDelivery,
} from '../store.js';
import type { SqliteCore } from './core.js';

/** The states whose rows keep their body, as an SQL list. */
const UNFINISHED = UNFINISHED_DELIVERY_STATES.map((state) => `'${state}'`).join(', ');

/** The delivery log (migrations 006 and 007): one row per receiver and transition, replaced at each attempt. */
export class DeliveryLog implements DeliveryLogStore {
  private readonly upsert: Database.Statement;
  private readonly select: Database.Statement;
  private readonly prune: Database.Statement;
  private readonly unfinished: Database.Statement;

  private readonly recordAll: (entries: readonly DeliveryEntry[]) => void;

  constructor(private readonly core: SqliteCore) {
    const db = core.db;
    this.upsert = db.prepare(`
      INSERT INTO alert_deliveries (receiver, transition_id, fingerprint, rule, from_state, to_state, state, attempts,
                                    last_status, last_error, created_at_ms, updated_at_ms, next_attempt_at_ms, delivered_at_ms, body)
      VALUES (@receiver, @transitionId, @fingerprint, @rule, @from, @to, @state, @attempts,
              @lastStatus, @lastError, @queuedAtMs, @atMs, @nextAttemptAtMs, CASE WHEN @state = 'delivered' THEN @atMs END,
              CASE WHEN @state IN (${UNFINISHED}) THEN @body END)
      ON CONFLICT (receiver, transition_id) DO UPDATE SET
        state = excluded.state,
        attempts = excluded.attempts,
        last_status = excluded.last_status,
        last_error = excluded.last_error,
        updated_at_ms = excluded.updated_at_ms,
        next_attempt_at_ms = excluded.next_attempt_at_ms,
        delivered_at_ms = COALESCE(alert_deliveries.delivered_at_ms, excluded.delivered_at_ms),
        body = CASE WHEN excluded.state IN (${UNFINISHED}) THEN COALESCE(excluded.body, alert_deliveries.body) END`);
    this.unfinished = db.prepare(`
      SELECT * FROM alert_deliveries
      WHERE receiver = ? AND state IN (${UNFINISHED}) AND body IS NOT NULL
      ORDER BY created_at_ms, id LIMIT ?`);
    this.select = db.prepare(`
      SELECT * FROM alert_deliveries
      WHERE (@receiver IS NULL OR receiver = @receiver)
        AND (@state IS NULL OR state = @state)
        AND (@fingerprint IS NULL OR fingerprint = @fingerprint)
        AND (@transitionId IS NULL OR transition_id = @transitionId)
      ORDER BY updated_at_ms DESC, id DESC LIMIT @limit`);
    this.prune = db.prepare('DELETE FROM alert_deliveries WHERE updated_at_ms < ?');
    this.recordAll = db.transaction((entries: readonly DeliveryEntry[]) => {
      for (const entry of entries) this.record(entry);
    });
  }

  recordDeliveries(entries: readonly DeliveryEntry[]): Promise<void> {
    if (this.core.closed || entries.length === 0) return Promise.resolve();
    // Between the store's other writes: an export applied in steps holds one transaction open across turns.
    return this.core.exclusive(() => this.recordAll(entries));
  }

  private record(entry: DeliveryEntry): void {
    this.upsert.run({
      receiver: entry.receiver,
      transitionId: entry.transitionId,
      fingerprint: entry.fingerprint,
      rule: entry.rule,
      from: entry.from,
      to: entry.to,
      state: entry.state,
      attempts: entry.attempts,
      lastStatus: entry.lastStatus ?? null,
      lastError: entry.lastError === undefined ? null : entry.lastError.slice(0, MAX_DELIVERY_ERROR_LENGTH),
      queuedAtMs: entry.queuedAtMs,
      atMs: entry.atMs,
      nextAttemptAtMs: entry.nextAttemptAtMs ?? null,
      body: entry.body ?? null,
    });
  }

  async deliveries(query: DeliveryQuery): Promise<DeliveryRecord[]> {
    const rows = this.select.all({
      receiver: query.receiver ?? null,
      state: query.state ?? null,
      fingerprint: query.fingerprint ?? null,
      transitionId: query.transitionId ?? null,
      limit: query.limit,
    }) as DeliveryRow[];
    return rows.map(deliveryRecord);
  }

  async unfinishedDeliveries(receiver: string, limit: number): Promise<UnfinishedDelivery[]> {
    return (this.unfinished.all(receiver, limit) as DeliveryRow[]).map((row) => ({ record: deliveryRecord(row), body: row.body ?? '' }));
  }

  /** Retention: rows not updated since `beforeMs`. */
  dropBefore(beforeMs: number): void {
    this.prune.run(beforeMs);
  }
}
