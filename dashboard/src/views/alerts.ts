import { type Context, type ViewModule, isNotFound } from '../lib/context.js';
import { code, count, externalLink, h, notice, replace, time } from '../lib/dom.js';
import { type State, parseState } from '../lib/state.js';
import type { AlertState, AlertView, AlertsResponse } from '../lib/types.js';

/**
 * Alerts from the collector's rules (`/api/v1/alerts`): what is firing or pending now, then what resolved, each
 * with a link to the view that shows its cause. Labels and annotations carry service names, client names and
 * extension ids, all sender-controlled: everything is text.
 */

const STATE_BADGES: Record<AlertState, { label: string; class: string }> = {
  firing: { label: '● firing', class: 'badge badge-drift' },
  pending: { label: '◐ pending', class: 'badge badge-stale' },
  resolved: { label: '✓ resolved', class: 'badge badge-ok' },
};

/** Labels every alert has (shown in their own columns). */
const SHOWN_ELSEWHERE = new Set(['alertname', 'severity']);
const HISTORY = 50;

/** The link to the cause, as state for this page: only a path of this page (`/?…`) is followed. */
function causeState(path: string): State | undefined {
  if (!path.startsWith('/?')) return undefined;
  return parseState(path.slice(1));
}

class AlertsView implements ViewModule {
  private body!: HTMLElement;

  mount(root: HTMLElement): void {
    this.body = h('div', { class: 'alerts' });
    replace(
      root,
      h('h2', null, 'Alerts'),
      h(
        'p',
        { class: 'hint' },
        'Drift alerts from the collector’s rules: pending while a condition has not yet held for the rule’s duration, firing after, resolved once it no longer holds. Each links to the view that shows the cause.',
      ),
      this.body,
    );
  }

  async update(context: Context): Promise<void> {
    const service = context.state.service === '' ? {} : { service: context.state.service };
    let current: AlertsResponse;
    let past: AlertsResponse;
    try {
      [current, past] = await Promise.all([
        context.load<AlertsResponse>('alerts', { state: 'active', limit: '500', ...service }),
        context.load<AlertsResponse>('alerts', { state: 'resolved', limit: String(HISTORY), ...service }),
      ]);
    } catch (error) {
      if (!context.isCurrent()) return;
      if (isNotFound(error)) {
        context.loaded();
        replace(this.body, notice('info', 'This collector does not evaluate alert rules.', 'It serves no /api/v1/alerts.'));
        return;
      }
      context.fail(error);
      return;
    }
    if (!context.isCurrent()) return;
    context.loaded();
    const { evaluation } = current;
    const status = h(
      'p',
      { class: 'summary' },
      `${count(evaluation.rules, 'rule')} `,
      // The file's name only: where it lies on the collector's disk is no business of the page's readers.
      evaluation.rulesFile === null ? '(the built-in rules)' : h('span', null, 'from ', code(evaluation.rulesFile.split(/[\\/]/).pop() ?? '')),
      `, evaluated every ${evaluation.intervalSeconds} s; last evaluation `,
      evaluation.lastEvaluation === null ? 'not yet' : time(evaluation.lastEvaluation),
      context.state.service === '' ? '' : ` · service ${context.state.service} only`,
    );
    const active = current.alerts.length === 0 ? notice('empty', 'No alert is pending or firing.') : this.table(context, current.alerts, 'active');
    const history =
      past.alerts.length === 0
        ? notice('empty', 'No alert has resolved yet.')
        : [
            this.table(context, past.alerts, 'resolved'),
            past.total > past.alerts.length ? h('p', { class: 'hint' }, `The ${past.alerts.length} most recent of ${past.total}.`) : null,
          ];
    replace(
      this.body,
      status,
      h('section', { 'aria-labelledby': 'alerts-active' }, h('h3', { id: 'alerts-active' }, `Firing and pending (${current.total})`), active),
      h('section', { 'aria-labelledby': 'alerts-resolved' }, h('h3', { id: 'alerts-resolved' }, `Resolved (${past.total})`), history),
    );
  }

  private table(context: Context, alerts: AlertView[], kind: 'active' | 'resolved'): HTMLElement {
    const head = h(
      'tr',
      null,
      h('th', { scope: 'col' }, 'State'),
      h('th', { scope: 'col' }, 'Alert'),
      h('th', { scope: 'col' }, 'Labels'),
      h('th', { scope: 'col' }, kind === 'active' ? 'Since' : 'Resolved'),
      h('th', { scope: 'col' }, 'Cause'),
    );
    return h(
      'table',
      { class: 'list alert-list', 'data-alerts': kind },
      h('thead', null, head),
      h('tbody', null, ...alerts.map((alert) => this.row(context, alert))),
    );
  }

  private row(context: Context, alert: AlertView): HTMLElement {
    const badge = STATE_BADGES[alert.state];
    const labels = Object.entries(alert.labels)
      .filter(([name]) => !SHOWN_ELSEWHERE.has(name))
      .map(([name, value]) => h('span', { class: 'badge label' }, `${name}=${value}`));
    const since = alert.state === 'resolved' ? alert.resolvedAt : alert.state === 'firing' ? alert.firingSince : alert.activeSince;
    const cause = causeState(alert.dashboardPath);
    let link: HTMLElement | string = '–';
    if (cause !== undefined) {
      link = h('a', { href: alert.dashboardPath, class: 'cause' }, `Open ${cause.view}`);
      link.addEventListener('click', (event) => {
        if (event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
        event.preventDefault();
        context.navigate(cause);
      });
    }
    return h(
      'tr',
      { class: `alert-${alert.state}`, 'data-fingerprint': alert.fingerprint },
      h('td', null, h('span', { class: badge.class }, badge.label), h('span', { class: 'sub' }, alert.severity)),
      h(
        'td',
        { class: 'alert-text' },
        h('span', { class: 'alert-summary' }, alert.annotations['summary'] ?? alert.rule),
        // The rule, and its kind where the name does not say it already.
        h('span', { class: 'sub' }, alert.rule === alert.kind ? alert.rule : `${alert.rule} (${alert.kind})`),
        alert.annotations['description'] === undefined ? null : h('span', { class: 'sub alert-description' }, alert.annotations['description']),
      ),
      h('td', { class: 'alert-labels' }, ...labels),
      h('td', null, since === null ? '–' : time(since)),
      h('td', { class: 'alert-links' }, link, ' ', externalLink(alert.annotations['runbook_url'], 'Runbook', { class: 'runbook' })),
    );
  }
}

export const alertsView = new AlertsView();
