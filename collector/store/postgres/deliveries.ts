import type pg from 'pg';
import { type DeliveryRow, MAX_DELIVERY_ERROR_LENGTH, deliveryRecord } from '../common/rows.js';
import {
  type DeliveryEntry,
  type DeliveryLogStore,
  type DeliveryQuery,
  type DeliveryRecord,
  UNFINISHED_DELIVERY_STATES,
  type UnfinishedDelivery,
} from '../store.js';
import { inTransaction, storeRead } from './connection.js';

/** The states whose rows keep their body, as an SQL list. */
const UNFINISHED = UNFINISHED_DELIVERY_STATES.map((state) => `'${state}'`).join(', ');

const UPSERT = `
  INSERT INTO alert_deliveries (receiver, transition_id, fingerprint, rule, from_state, to_state, state, attempts,
                                last_status, last_error, created_at_ms, updated_at_ms, next_attempt_at_ms, delivered_at_ms, body)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, CASE WHEN $7 = 'delivered' THEN $12::bigint END,
          CASE WHEN $7 IN (${UNFINISHED}) THEN $14::text END)
  ON CONFLICT (receiver, transition_id) DO UPDATE SET
    state = excluded.state,
    attempts = excluded.attempts,
    last_status = excluded.last_status,
    last_error = excluded.last_error,
    updated_at_ms = excluded.updated_at_ms,
    next_attempt_at_ms = excluded.next_attempt_at_ms,
    delivered_at_ms = COALESCE(alert_deliveries.delivered_at_ms, excluded.delivered_at_ms),
    body = CASE WHEN excluded.state IN (${UNFINISHED}) THEN COALESCE(excluded.body, alert_deliveries.body) END`;

/** The delivery log (migration 006): one row per receiver and transition, replaced at each attempt. */
export class DeliveryLog implements DeliveryLogStore {
  constructor(private readonly pool: pg.Pool) {}

  /** One transaction; entries in order, so that the last state of a notification given twice wins. */
  recordDeliveries(entries: readonly DeliveryEntry[]): Promise<void> {
    if (entries.length === 0) return Promise.resolve();
    return inTransaction(this.pool, async (db) => {
      for (const entry of entries) {
        await db.query(UPSERT, [
          entry.receiver,
          entry.transitionId,
          entry.fingerprint,
          entry.rule,
          entry.from,
          entry.to,
          entry.state,
          entry.attempts,
          entry.lastStatus ?? null,
          entry.lastError === undefined ? null : entry.lastError.slice(0, MAX_DELIVERY_ERROR_LENGTH),
          entry.queuedAtMs,
          entry.atMs,
          entry.nextAttemptAtMs ?? null,
          entry.body ?? null,
        ]);
      }
    });
  }

  deliveries(query: DeliveryQuery): Promise<DeliveryRecord[]> {
    return storeRead(() => this.read(query));
  }

  private async read(query: DeliveryQuery): Promise<DeliveryRecord[]> {
    const { rows } = await this.pool.query<DeliveryRow>(
      `SELECT * FROM alert_deliveries
       WHERE ($1::text IS NULL OR receiver = $1) AND ($2::text IS NULL OR state = $2)
         AND ($3::text IS NULL OR fingerprint = $3) AND ($4::text IS NULL OR transition_id = $4)
       ORDER BY updated_at_ms DESC, id DESC LIMIT $5`,
      [query.receiver ?? null, query.state ?? null, query.fingerprint ?? null, query.transitionId ?? null, query.limit],
    );
    return rows.map(deliveryRecord);
  }

  unfinishedDeliveries(receiver: string, limit: number): Promise<UnfinishedDelivery[]> {
    return storeRead(() => this.readUnfinished(receiver, limit));
  }

  private async readUnfinished(receiver: string, limit: number): Promise<UnfinishedDelivery[]> {
    const { rows } = await this.pool.query<DeliveryRow>(
      `SELECT * FROM alert_deliveries WHERE receiver = $1 AND state IN (${UNFINISHED}) AND body IS NOT NULL ORDER BY created_at_ms, id LIMIT $2`,
      [receiver, limit],
    );
    return rows.map((row) => ({ record: deliveryRecord(row), body: row.body ?? '' }));
  }
}
