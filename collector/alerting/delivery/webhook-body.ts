import type { AlertTransition } from '../../model/alerts.js';
import { dashboardLink, notifiedAnnotations } from './dashboard-link.js';

/**
 * The JSON body of one webhook message: one transition of one alert (docs/alerting-delivery.md shows it).
 * `version` changes only when a field changes meaning or goes away; fields may be added within a version.
 */
export interface WebhookBody {
  version: '1';
  /** The transition id: the same on every attempt (and in the Idempotency-Key header). */
  id: string;
  transition: { from: string; to: string; at: string };
  alert: {
    fingerprint: string;
    rule: string;
    kind: string;
    severity: string;
    state: string;
    activeSince: string;
    firingSince: string | null;
    resolvedAt: string | null;
  };
  labels: Record<string, string>;
  /** The alert's, with `runbook_url` and `dashboard_url` (the same link as {@link WebhookBody.dashboardUrl}). */
  annotations: Record<string, string>;
  dashboardUrl: string;
}

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

/** `publicUrl`: the collector's address the dashboard links start with. */
export function webhookBody(transition: AlertTransition, publicUrl: string): WebhookBody {
  const { alert } = transition;
  return {
    version: '1',
    id: transition.id,
    transition: { from: transition.from, to: transition.to, at: new Date(transition.atMs).toISOString() },
    alert: {
      fingerprint: alert.fingerprint,
      rule: alert.rule,
      kind: alert.kind,
      severity: alert.severity,
      state: alert.state,
      activeSince: new Date(alert.activeSinceMs).toISOString(),
      firingSince: iso(alert.firingSinceMs),
      resolvedAt: iso(alert.resolvedAtMs),
    },
    labels: { ...alert.labels },
    annotations: notifiedAnnotations(publicUrl, alert),
    dashboardUrl: dashboardLink(publicUrl, alert),
  };
}
