import type pg from 'pg';
import type { Alert } from '../../model/alerts.js';
import { type AlertRow, type TransitionRow, alertRecord } from '../common/rows.js';
import type { AlertChanges, AlertPage, AlertQuery, AlertRecord, AlertStateStore } from '../store.js';
import { inTransaction, storeRead } from './connection.js';

/** In the order every store lists them (store.ts `AlertStateStore.alerts`), byte order for text whatever the locale. */
const ORDER = `CASE state WHEN 'firing' THEN 0 WHEN 'pending' THEN 1 ELSE 2 END, active_since_ms DESC, rule COLLATE "C", service COLLATE "C", labels COLLATE "C", fingerprint COLLATE "C"`;

const UPSERT = `
  INSERT INTO alerts (fingerprint, active_since_ms, rule, kind, severity, state, service, labels, annotations, firing_since_ms, resolved_at_ms, dashboard_path)
  SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[], $11::bigint[], $12::text[])
  ON CONFLICT (fingerprint, active_since_ms) DO UPDATE SET
    severity = excluded.severity, state = excluded.state, labels = excluded.labels, annotations = excluded.annotations,
    firing_since_ms = excluded.firing_since_ms, resolved_at_ms = excluded.resolved_at_ms, dashboard_path = excluded.dashboard_path`;
const INSERT_TRANSITIONS = `
  INSERT INTO alert_transitions (id, fingerprint, active_since_ms, from_state, to_state, at_ms)
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::bigint[])
  ON CONFLICT (id) DO NOTHING`;

/** The `alerts` and `alert_transitions` tables (migration 005); written by the one replica that evaluates. */
export class AlertsTable implements AlertStateStore {
  constructor(private readonly pool: pg.Pool) {}

  activeAlerts(): Promise<Alert[]> {
    return storeRead(async () => (await this.pool.query<AlertRow>(`SELECT * FROM alerts WHERE state <> 'resolved' ORDER BY ${ORDER}`)).rows.map(alertRecord));
  }

  /** One transaction; alerts are upserted in key order, so that two writers (a replica taking over) cannot deadlock. */
  recordAlerts(changes: AlertChanges): Promise<void> {
    if (changes.alerts.length === 0 && changes.transitions.length === 0) return Promise.resolve();
    // One row per activation (the last given wins): an upsert statement may not touch a row twice.
    const latest = new Map(changes.alerts.map((alert) => [`${alert.fingerprint}\u0000${alert.activeSinceMs}`, alert]));
    const alerts = [...latest.values()].sort((a, b) =>
      a.fingerprint < b.fingerprint ? -1 : a.fingerprint > b.fingerprint ? 1 : a.activeSinceMs - b.activeSinceMs,
    );
    return inTransaction(this.pool, async (db) => {
      if (alerts.length > 0) {
        await db.query(UPSERT, [
          alerts.map((alert) => alert.fingerprint),
          alerts.map((alert) => alert.activeSinceMs),
          alerts.map((alert) => alert.rule),
          alerts.map((alert) => alert.kind),
          alerts.map((alert) => alert.severity),
          alerts.map((alert) => alert.state),
          alerts.map((alert) => alert.labels['service'] ?? null),
          alerts.map((alert) => JSON.stringify(alert.labels)),
          alerts.map((alert) => JSON.stringify(alert.annotations)),
          alerts.map((alert) => alert.firingSinceMs ?? null),
          alerts.map((alert) => alert.resolvedAtMs ?? null),
          alerts.map((alert) => alert.dashboardPath),
        ]);
      }
      const transitions = changes.transitions;
      if (transitions.length > 0) {
        await db.query(INSERT_TRANSITIONS, [
          transitions.map((transition) => transition.id),
          transitions.map((transition) => transition.alert.fingerprint),
          transitions.map((transition) => transition.alert.activeSinceMs),
          transitions.map((transition) => transition.from),
          transitions.map((transition) => transition.to),
          transitions.map((transition) => transition.atMs),
        ]);
      }
    });
  }

  /** One snapshot, so that the total and the page agree. */
  alerts(query: AlertQuery): Promise<AlertPage> {
    return storeRead(() => this.page(query));
  }

  private async page(query: AlertQuery): Promise<AlertPage> {
    const conditions: string[] = [];
    const parameters: unknown[] = [];
    if (query.states !== undefined && query.states.length > 0) {
      parameters.push(query.states);
      conditions.push(`state = ANY($${parameters.length}::text[])`);
    }
    if (query.rule !== undefined) {
      parameters.push(query.rule);
      conditions.push(`rule = $${parameters.length}`);
    }
    if (query.service !== undefined) {
      parameters.push(query.service);
      conditions.push(`service = $${parameters.length}`);
    }
    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const { rows: counted } = await client.query<{ n: number }>(`SELECT count(*)::bigint AS n FROM alerts ${where}`, parameters);
      const { rows } = await client.query<AlertRow>(
        `SELECT * FROM alerts ${where} ORDER BY ${ORDER} LIMIT $${parameters.length + 1} OFFSET $${parameters.length + 2}`,
        [...parameters, query.limit, query.offset],
      );
      const { rows: transitions } = await client.query<TransitionRow>(
        `SELECT t.* FROM alert_transitions t JOIN unnest($1::text[], $2::bigint[]) AS a (fingerprint, active_since_ms) USING (fingerprint, active_since_ms)
         ORDER BY t.at_ms, CASE t.to_state WHEN 'pending' THEN 0 WHEN 'firing' THEN 1 ELSE 2 END`,
        [rows.map((row) => row.fingerprint), rows.map((row) => row.active_since_ms)],
      );
      await client.query('COMMIT');
      client.release();
      const byAlert = new Map<string, AlertRecord['transitions']>();
      for (const t of transitions) {
        const key = `${t.fingerprint}\u0000${t.active_since_ms}`;
        let list = byAlert.get(key);
        if (list === undefined) byAlert.set(key, (list = []));
        list.push({ from: t.from_state, to: t.to_state, atMs: t.at_ms });
      }
      const alerts: AlertRecord[] = rows.map((row) => ({
        ...alertRecord(row),
        transitions: byAlert.get(`${row.fingerprint}\u0000${row.active_since_ms}`) ?? [],
      }));
      return { total: counted[0]?.n ?? 0, alerts };
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
  }

  pruneAlerts(resolvedBeforeMs: number): Promise<number> {
    return inTransaction(this.pool, async (db) => {
      await db.query(
        'DELETE FROM alert_transitions WHERE (fingerprint, active_since_ms) IN (SELECT fingerprint, active_since_ms FROM alerts WHERE resolved_at_ms < $1)',
        [resolvedBeforeMs],
      );
      return (await db.query('DELETE FROM alerts WHERE resolved_at_ms < $1', [resolvedBeforeMs])).rowCount ?? 0;
    });
  }
}
