import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Alertmanager, type AlertmanagerAlert, startAlertmanager } from '../../../support/alertmanager.js';
import { type TestCollector, getJson, startTestCollector, tempDir } from '../../helpers/collector.js';
import { alert, cycle, opened, transition } from './cycles.js';
import { deadUrl, eventually, startReceiver } from './receiver.js';

const PUBLIC_URL = 'http://extscope.example.test:4318';

describe('Alertmanager delivery (a real prometheus-alertmanager, API v2)', () => {
  let alertmanager: Alertmanager;
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;
  beforeAll(async () => {
    alertmanager = await startAlertmanager();
    temp = await tempDir();
    collector = await startTestCollector(temp.dir, { delivery: { alertmanagerUrls: [alertmanager.url], publicUrl: PUBLIC_URL, alertmanagerResendMs: 200 } });
  });
  afterAll(async () => {
    await collector?.close();
    await alertmanager?.stop();
    await temp?.cleanup();
  });

  const find = (alerts: AlertmanagerAlert[], service: string): AlertmanagerAlert | undefined =>
    alerts.find((each) => each.labels['alertname'] === 'advertisement-skew' && each.labels['service'] === service);

  it('a firing alert appears with its labels, annotations and a link back; it is re-sent while firing and ends after resolve', async () => {
    const start = alert({
      labels: { alertname: 'advertisement-skew', severity: 'warning', service: 'api', 'extension.id': 'io.modelcontextprotocol/tasks', empty: '' },
    });
    const pending = opened(start);
    collector.notifier.deliver(cycle([pending], []));
    const firing = transition(pending.alert, 'firing');
    collector.notifier.deliver(cycle([firing], [firing.alert]));

    const shown = await eventually(async () => find(await alertmanager.alerts(), 'api'), 'the alert in Alertmanager');
    expect(shown.labels).toEqual({ alertname: 'advertisement-skew', severity: 'warning', service: 'api', extension_id: 'io.modelcontextprotocol/tasks' });
    // The alert's annotations, and the link to the view of its cause (the same as generatorURL).
    expect(shown.annotations).toEqual({ ...start.annotations, dashboard_url: `${PUBLIC_URL}/#/fleet?service=api` });
    expect(shown.generatorURL).toBe(`${PUBLIC_URL}/#/fleet?service=api`);
    expect(Date.parse(shown.startsAt)).toBe(firing.atMs);
    expect(Date.parse(shown.endsAt)).toBeGreaterThan(Date.now());
    expect(shown.status.state).toBe('active');

    // Later cycles without a transition re-send it (once the resend interval has passed): its end moves on.
    const resent = await eventually(async () => {
      collector.notifier.deliver(cycle([], [firing.alert]));
      const now = find(await alertmanager.alerts(), 'api');
      return now !== undefined && Date.parse(now.endsAt) > Date.parse(shown.endsAt) ? now : undefined;
    }, 'a re-sent alert with a later endsAt');
    expect(resent.fingerprint).toBe(shown.fingerprint);

    const resolved = transition(firing.alert, 'resolved');
    collector.notifier.deliver(cycle([resolved], []));
    await eventually(async () => (find(await alertmanager.alerts(), 'api') === undefined ? true : undefined), 'the alert to end in Alertmanager');

    // The log is written shortly after each step.
    const states = await eventually(async () => {
      const { body } = await getJson<{ deliveries: { transitionId: string; state: string }[] }>(
        `${collector.url}/api/v1/alerts/deliveries?receiver=alertmanager`,
      );
      const byId = new Map(body.deliveries.map((row) => [row.transitionId, row.state]));
      return byId.get(resolved.id) === 'delivered' ? byId : undefined;
    }, 'the resolution delivered in the log');
    // Pending alerts are not Alertmanager's business; firing and its resolution are.
    expect(states.has(pending.id)).toBe(false);
    expect(states.get(firing.id)).toBe('delivered');
    expect(states.get(resolved.id)).toBe('delivered');
    const metrics = await (await fetch(`${collector.url}/metrics`)).text();
    const sent = Number(/extscope_alert_deliveries_total\{receiver="alertmanager",result="sent"\} (\d+)/.exec(metrics)?.[1]);
    expect(sent).toBeGreaterThanOrEqual(3);
  });

  it('an alert that fires again after resolving is active again', async () => {
    const start = alert({ labels: { alertname: 'advertisement-skew', severity: 'warning', service: 'billing' }, dashboardPath: '/#/fleet?service=billing' });
    const pending = opened(start);
    const firing = transition(pending.alert, 'firing');
    collector.notifier.deliver(cycle([pending, firing], [firing.alert]));
    await eventually(async () => find(await alertmanager.alerts(), 'billing'), 'the alert in Alertmanager');
    const resolved = transition(firing.alert, 'resolved');
    const again = transition(opened(start).alert, 'firing');
    collector.notifier.deliver(cycle([resolved], []));
    collector.notifier.deliver(cycle([again], [again.alert]));
    const shown = await eventually(async () => {
      const now = find(await alertmanager.alerts(), 'billing');
      return now !== undefined && Date.parse(now.startsAt) === again.atMs ? now : undefined;
    }, 'the alert active again');
    expect(Date.parse(shown.endsAt)).toBeGreaterThan(Date.now());
  });
});

describe('Alertmanager delivery from a collector whose clock runs ahead', () => {
  it('a resolved alert still ends now in Alertmanager (which judges endsAt by its own clock)', async () => {
    const alertmanager = await startAlertmanager();
    const temp = await tempDir();
    const ahead = (): number => Date.now() + 10 * 60_000;
    const collector = await startTestCollector(temp.dir, { clock: ahead, delivery: { alertmanagerUrls: [alertmanager.url] } });
    try {
      const firing = transition(
        opened(alert({ labels: { alertname: 'advertisement-skew', severity: 'warning', service: 'ahead' } }), Date.now()).alert,
        'firing',
        Date.now(),
      );
      collector.notifier.deliver(cycle([firing], [firing.alert]));
      await eventually(async () => (await alertmanager.alerts()).find((each) => each.labels['service'] === 'ahead'), 'the alert in Alertmanager');
      const resolved = transition(firing.alert, 'resolved', ahead());
      collector.notifier.deliver(cycle([resolved], []));
      await eventually(async () => ((await alertmanager.alerts()).some((each) => each.labels['service'] === 'ahead') ? undefined : true), 'the alert to end');
    } finally {
      await collector.close();
      await alertmanager.stop();
      await temp.cleanup();
    }
  });
});

describe('Alertmanager delivery to one that is down', () => {
  it('retries with backoff up to the cap, each step in the delivery log, and then gives up', async () => {
    const temp = await tempDir();
    const collector = await startTestCollector(temp.dir, {
      delivery: { alertmanagerUrls: [(await deadUrl()).replace('/hooks/extscope', '')], retry: { initialDelayMs: 20, maxDelayMs: 100, maxAttempts: 4 } },
    });
    try {
      const firing = transition(opened(alert()).alert, 'firing');
      collector.notifier.deliver(cycle([firing], [firing.alert]));
      const row = await eventually(async () => {
        const { body } = await getJson<{ deliveries: { state: string; attempts: number; lastError: string | null }[] }>(
          `${collector.url}/api/v1/alerts/deliveries?transition=${firing.id}`,
        );
        const [first] = body.deliveries;
        return first?.state === 'failed' ? first : undefined;
      }, 'the post given up');
      expect(row).toMatchObject({ state: 'failed', attempts: 4 });
      expect(row.lastError).toMatch(/ECONNREFUSED/);
      const metrics = await (await fetch(`${collector.url}/metrics`)).text();
      expect(metrics).toMatch(/extscope_alert_deliveries_total\{receiver="alertmanager",result="retried"\} 3/);
      expect(metrics).toMatch(/extscope_alert_deliveries_total\{receiver="alertmanager",result="failed"\} 1/);
    } finally {
      await collector.close();
      await temp.cleanup();
    }
  });

  it('closing does not wait for one that never answers: the post is cancelled and the transition marked abandoned', async () => {
    const hanging = await startReceiver(() => 0);
    const temp = await tempDir();
    const collector = await startTestCollector(temp.dir, {
      delivery: { alertmanagerUrls: [hanging.url.replace('/hooks/extscope', '')], requestTimeoutMs: 600_000 },
    });
    try {
      const firing = transition(opened(alert()).alert, 'firing');
      collector.notifier.deliver(cycle([firing], [firing.alert]));
      await eventually(async () => (hanging.requests.length === 1 ? true : undefined), 'the post to arrive');
      expect(JSON.parse(hanging.requests[0]!.body)).toHaveLength(1);
      await collector.close();
      const reopened = await startTestCollector(temp.dir);
      try {
        const { body } = await getJson<{ deliveries: { state: string; attempts: number }[] }>(
          `${reopened.url}/api/v1/alerts/deliveries?transition=${firing.id}`,
        );
        expect(body.deliveries).toMatchObject([{ state: 'abandoned', attempts: 1 }]);
      } finally {
        await reopened.close();
      }
    } finally {
      await collector.close();
      await hanging.close();
      await temp.cleanup();
    }
  });
});
