import { type Context, type ViewModule, isNotFound } from '../context.js';
import { h, notice, replace } from '../dom.js';

/**
 * Drift alerts, once the collector evaluates alert rules (`/api/v1/alerts`). Until then: "none configured". The
 * list is rendered from whatever fields an alert carries, as text.
 */
interface Alert {
  [key: string]: unknown;
}

const text = (value: unknown): string => (value === null || value === undefined ? '–' : typeof value === 'object' ? JSON.stringify(value) : String(value));

class AlertsView implements ViewModule {
  private body!: HTMLElement;

  mount(root: HTMLElement): void {
    this.body = h('div', { class: 'alerts' });
    replace(root, h('h2', null, 'Alerts'), this.body);
  }

  async update(context: Context): Promise<void> {
    let alerts: Alert[];
    try {
      const response = await context.load<{ alerts?: Alert[] } | Alert[]>('alerts');
      alerts = Array.isArray(response) ? response : (response.alerts ?? []);
    } catch (error) {
      if (!context.isCurrent()) return;
      if (isNotFound(error)) {
        context.loaded();
        replace(this.body, notice('info', 'No alert rules configured.', 'This collector does not evaluate drift alerts yet. Once alert rules are set up (fleet drift, an extension no longer advertised, a falling negotiated share, -32021 rates, stale instances), their states appear here.'));
        return;
      }
      context.fail(error);
      return;
    }
    if (!context.isCurrent()) return;
    context.loaded();
    if (alerts.length === 0) {
      replace(this.body, notice('info', 'No alert is pending or firing.'));
      return;
    }
    const columns = [...new Set(alerts.flatMap((alert) => Object.keys(alert)))].slice(0, 8);
    replace(
      this.body,
      h(
        'table',
        { class: 'list' },
        h('thead', null, h('tr', null, ...columns.map((column) => h('th', { scope: 'col' }, column)))),
        h('tbody', null, ...alerts.map((alert) => h('tr', { class: `alert-${text(alert['state'])}` }, ...columns.map((column) => h('td', null, text(alert[column])))))),
      ),
    );
  }
}

export const alertsView = new AlertsView();
