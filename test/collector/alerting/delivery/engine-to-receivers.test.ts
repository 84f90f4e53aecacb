import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Alertmanager, startAlertmanager } from '../../../support/alertmanager.js';
import { startPrometheus } from '../../../support/prometheus.js';
import { type TestCollector, getJson, tempDir } from '../../helpers/collector.js';
import { alertingCollectorWith, send } from './engine-helpers.js';
import { type WebhookReceiver, eventually, startReceiver } from './receiver.js';

const A = 'com.example/a';
const B = 'com.example/b';
const SECRET = 'engine-to-receivers-secret-0123';

describe('from the rule engine to the receivers', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let alertmanager: Alertmanager;
  let receiver: WebhookReceiver;
  let collector: TestCollector;
  let clock: { now: number };
  beforeAll(async () => {
    temp = await tempDir();
    alertmanager = await startAlertmanager();
    receiver = await startReceiver();
    ({ collector, clock } = await alertingCollectorWith(temp.dir, 'rules:\n  - { name: skew, kind: advertisement_skew, for: 0s }\n', Date.now(), {
      delivery: { webhookUrl: receiver.url, webhookSecret: SECRET, alertmanagerUrls: [alertmanager.url], publicUrl: 'https://extscope.example.test' },
    }));
  });
  afterAll(async () => {
    await collector?.close();
    await receiver?.close();
    await alertmanager?.stop();
    await temp?.cleanup();
  });

  it('an evaluation that fires skew reaches the webhook and Alertmanager, and its resolution too', async () => {
    await send(collector.url, { service: 'ids', instance: 'ids-1', atMs: clock.now - 60_000, advertised: [{ id: A }] });
    await send(collector.url, { service: 'ids', instance: 'ids-2', atMs: clock.now - 60_000, advertised: [{ id: A }, { id: B }] });
    await collector.alerting.evaluate();
    const shown = await eventually(async () => (await alertmanager.alerts()).find((alert) => alert.labels['alertname'] === 'skew'), 'skew in Alertmanager');
    expect(shown.labels['service']).toBe('ids');
    expect(shown.generatorURL).toBe('https://extscope.example.test/?view=fleet&service=ids');
    await eventually(
      async () => (receiver.requests.some((request) => JSON.parse(request.body).transition.to === 'firing') ? true : undefined),
      'the firing webhook',
    );

    // Prometheus users can alert from the state gauge instead.
    const prometheus = await startPrometheus({ url: collector.url });
    try {
      const [sample] = await eventually(async () => {
        const samples = await prometheus.query('extscope_alerts{alertname="skew",alertstate="firing"}');
        return samples.length > 0 ? samples : undefined;
      }, 'the alert-state series in Prometheus');
      expect(sample?.metric['service']).toBe('ids');
      expect(sample?.value[1]).toBe('1');
    } finally {
      await prometheus.stop();
    }

    clock.now += 120_000;
    await send(collector.url, { service: 'ids', instance: 'ids-1', atMs: clock.now - 60_000, advertised: [{ id: A }, { id: B }] });
    await send(collector.url, { service: 'ids', instance: 'ids-2', atMs: clock.now - 60_000, advertised: [{ id: A }, { id: B }] });
    await collector.alerting.evaluate();
    await eventually(
      async () => ((await alertmanager.alerts()).some((alert) => alert.labels['alertname'] === 'skew') ? undefined : true),
      'skew ended in Alertmanager',
    );
    const messages = await eventually(async () => {
      const bodies = receiver.requests.map((request) => JSON.parse(request.body) as { id: string; transition: { from: string; to: string } });
      return bodies.some((body) => body.transition.to === 'resolved') ? bodies : undefined;
    }, 'the resolved webhook');
    expect(new Set(messages.map((body) => body.id)).size).toBe(messages.length);
    expect(messages.map((message) => `${message.transition.from} → ${message.transition.to}`)).toEqual(['inactive → firing', 'firing → resolved']);
    // Two transitions, each delivered once to each receiver (the log is written shortly after each step).
    const rows = await eventually(async () => {
      const { body } = await getJson<{ deliveries: { receiver: string; state: string }[] }>(`${collector.url}/api/v1/alerts/deliveries`);
      return body.deliveries.length === 4 && body.deliveries.every((row) => row.state === 'delivered') ? body.deliveries : undefined;
    }, 'four delivered rows');
    expect(rows.map((row) => row.receiver).sort()).toEqual(['alertmanager', 'alertmanager', 'webhook', 'webhook']);
  });
});
