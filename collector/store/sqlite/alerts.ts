import type Database from 'better-sqlite3';
import type { Alert } from '../../model/alerts.js';
import { type AlertRow, type TransitionRow, alertRecord } from '../common/rows.js';
import type { AlertChanges, AlertPage, AlertQuery, AlertRecord, AlertStateStore } from '../store.js';
import type { SqliteCore } from './core.js';

/** Firing, pending, resolved; newest first; then by rule, service and labels, so that the order is the same each time. */
const ORDER = `CASE state WHEN 'firing' THEN 0 WHEN 'pending' THEN 1 ELSE 2 END, active_since_ms DESC, rule, service, labels, fingerprint`;

/** The `alerts` and `alert_transitions` tables (migration 005); written through the store's one write queue. */
export class AlertsTable implements AlertStateStore {
  private readonly db: Database.Database;
  private readonly upsert: Database.Statement;
  private readonly insertTransition: Database.Statement;
  private readonly active: Database.Statement;
  private readonly transitionsOf: Database.Statement;
  private readonly pruneTransitions: Database.Statement;
  private readonly pruneResolved: Database.Statement;
  private readonly recordTransaction: (changes: AlertChanges) => void;

  constructor(private readonly core: SqliteCore) {
    const db = core.db;
    this.db = db;
    this.upsert = db.prepare(`
      INSERT INTO alerts (fingerprint, active_since_ms, rule, kind, severity, state, service, labels, annotations, firing_since_ms, resolved_at_ms, dashboard_path)
      VALUES (@fingerprint, @activeSinceMs, @rule, @kind, @severity, @state, @service, @labels, @annotations, @firingSinceMs, @resolvedAtMs, @dashboardPath)
      ON CONFLICT (fingerprint, active_since_ms) DO UPDATE SET
        severity = excluded.severity, state = excluded.state, labels = excluded.labels, annotations = excluded.annotations,
        firing_since_ms = excluded.firing_since_ms, resolved_at_ms = excluded.resolved_at_ms, dashboard_path = excluded.dashboard_path`);
    this.insertTransition = db.prepare(`
      INSERT INTO alert_transitions (id, fingerprint, active_since_ms, from_state, to_state, at_ms) VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (id) DO NOTHING`);
    this.active = db.prepare(`SELECT * FROM alerts WHERE state <> 'resolved' ORDER BY ${ORDER}`);
    this.transitionsOf = db.prepare(
      `SELECT * FROM alert_transitions WHERE fingerprint = ? AND active_since_ms = ? ORDER BY at_ms, CASE to_state WHEN 'pending' THEN 0 WHEN 'firing' THEN 1 ELSE 2 END`,
    );
    this.pruneTransitions = db.prepare(`
      DELETE FROM alert_transitions WHERE (fingerprint, active_since_ms) IN (SELECT fingerprint, active_since_ms FROM alerts WHERE resolved_at_ms < ?)`);
    this.pruneResolved = db.prepare('DELETE FROM alerts WHERE resolved_at_ms < ?');
    this.recordTransaction = db.transaction((changes: AlertChanges) => {
      for (const alert of changes.alerts) {
        this.upsert.run({
          fingerprint: alert.fingerprint,
          activeSinceMs: alert.activeSinceMs,
          rule: alert.rule,
          kind: alert.kind,
          severity: alert.severity,
          state: alert.state,
          service: alert.labels['service'] ?? null,
          labels: JSON.stringify(alert.labels),
          annotations: JSON.stringify(alert.annotations),
          firingSinceMs: alert.firingSinceMs ?? null,
          resolvedAtMs: alert.resolvedAtMs ?? null,
          dashboardPath: alert.dashboardPath,
        });
      }
      for (const transition of changes.transitions) {
        this.insertTransition.run(transition.id, transition.alert.fingerprint, transition.alert.activeSinceMs, transition.from, transition.to, transition.atMs);
      }
    });
  }

  async activeAlerts(): Promise<Alert[]> {
    return (this.active.all() as AlertRow[]).map(alertRecord);
  }

  recordAlerts(changes: AlertChanges): Promise<void> {
    // Between the store's other writes: an export applied in steps holds one transaction open across turns.
    return this.core.write(() => this.recordTransaction(changes));
  }

  async alerts(query: AlertQuery): Promise<AlertPage> {
    const conditions: string[] = [];
    const parameters: unknown[] = [];
    if (query.states !== undefined && query.states.length > 0) {
      conditions.push(`state IN (${query.states.map(() => '?').join(', ')})`);
      parameters.push(...query.states);
    }
    if (query.rule !== undefined) {
      conditions.push('rule = ?');
      parameters.push(query.rule);
    }
    if (query.service !== undefined) {
      conditions.push('service = ?');
      parameters.push(query.service);
    }
    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
    const total = (this.db.prepare(`SELECT count(*) AS n FROM alerts ${where}`).get(...parameters) as { n: number }).n;
    const rows = this.db
      .prepare(`SELECT * FROM alerts ${where} ORDER BY ${ORDER} LIMIT ? OFFSET ?`)
      .all(...parameters, query.limit, query.offset) as AlertRow[];
    const alerts: AlertRecord[] = rows.map((row) => ({
      ...alertRecord(row),
      transitions: (this.transitionsOf.all(row.fingerprint, row.active_since_ms) as TransitionRow[]).map((t) => ({
        from: t.from_state,
        to: t.to_state,
        atMs: t.at_ms,
      })),
    }));
    return { total, alerts };
  }

  pruneAlerts(resolvedBeforeMs: number): Promise<number> {
    return this.core.exclusive(() =>
      this.db.transaction(() => {
        this.pruneTransitions.run(resolvedBeforeMs);
        return this.pruneResolved.run(resolvedBeforeMs).changes;
      })(),
    );
  }
}
