import type { Alert } from '../../model/alerts.js';

/** The annotation every notification carries: the dashboard view of the alert's cause, over the range the rule read. */
const DASHBOARD_ANNOTATION = 'dashboard_url';

/** `publicUrl` + a dashboard path, whatever slashes each has. */
function dashboardUrl(publicUrl: string, path: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

/**
 * The link to the view of an alert's cause: the rule's own `dashboard_url` annotation where it sets one (a path,
 * starting with `/`, is taken from the public URL; a full URL is kept), else the view the condition chose.
 */
export function dashboardLink(publicUrl: string, alert: Pick<Alert, 'annotations' | 'dashboardPath'>): string {
  const own = alert.annotations[DASHBOARD_ANNOTATION]?.trim();
  if (own === undefined || own === '') return dashboardUrl(publicUrl, alert.dashboardPath);
  return own.startsWith('/') && !own.startsWith('//') ? dashboardUrl(publicUrl, own) : own;
}

/** An alert's annotations as every notification carries them: its own, and the dashboard link. */
export function notifiedAnnotations(publicUrl: string, alert: Pick<Alert, 'annotations' | 'dashboardPath'>): Record<string, string> {
  return { ...alert.annotations, [DASHBOARD_ANNOTATION]: dashboardLink(publicUrl, alert) };
}
