import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Prometheus, type InstantSample, startPrometheus } from '../../../support/prometheus.js';
import { type TestCollector, startTestCollector, tempDir } from '../../helpers/collector.js';
import { MINUTE_NS, extensionPoint, metricsRequest, msToNs, postMetrics, requestPoint } from '../../helpers/otlp.js';
import { alert, cycle, opened } from './cycles.js';
import { type WebhookReceiver, eventually, startReceiver } from './receiver.js';

const READ_TOKEN = 'read-token-for-prometheus-0123456789';
const TASKS = 'io.modelcontextprotocol/tasks';

describe('a real Prometheus scraping the collector', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;
  let prometheus: Prometheus;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    temp = await tempDir();
    receiver = await startReceiver();
    collector = await startTestCollector(temp.dir, {
      readToken: READ_TOKEN,
      delivery: { webhookUrl: receiver.url, webhookSecret: 'prometheus-test-secret-0123456789' },
    });
    const t = msToNs(Date.now());
    const point = { client: 'claude-code', version: '1.2.0', declaration: 'declared' as const, count: 4, startNs: t - MINUTE_NS, timeNs: t };
    const response = await postMetrics(
      collector.url,
      metricsRequest({
        resource: { service: 'api', instance: 'i-1' },
        requests: [requestPoint(point)],
        extensions: [extensionPoint({ ...point, id: TASKS, clientDeclared: true, serverDeclared: true, negotiated: true, count: 3 })],
      }),
    );
    expect(response.status).toBe(200);
    collector.notifier.deliver(cycle([opened(alert())], []));
    await eventually(async () => (receiver.requests.length === 1 ? true : undefined), 'the webhook delivered');
    prometheus = await startPrometheus({ url: collector.url, bearerToken: READ_TOKEN });
  });
  afterAll(async () => {
    await prometheus?.stop();
    await collector?.close();
    await receiver?.close();
    await temp?.cleanup();
  });

  const value = (samples: InstantSample[]): number | undefined => (samples[0] === undefined ? undefined : Number(samples[0].value[1]));

  it('the target is up (scraped with the read token)', async () => {
    const target = await eventually(async () => (await prometheus.targets()).find((each) => each.health === 'up'), 'the target up');
    expect(target.scrapeUrl).toBe(`${collector.url}/metrics`);
    expect(value(await prometheus.query('up{job="extscope"}'))).toBe(1);
  });

  it('the request counters, a negotiated share taken from them and the delivery counters are queryable', async () => {
    const requests = await eventually(
      async () => value(await prometheus.query('sum(extscope_requests_total{service="api",client="claude-code"})')),
      'extscope_requests_total',
    );
    expect(requests).toBe(4);
    const shared = await prometheus.query(
      `sum by (client) (extscope_extension_requests_total{client="claude-code",extension="${TASKS}",state="negotiated"}) / sum by (client) (extscope_requests_total{server_declaration!="unknown"})`,
    );
    expect(value(shared)).toBe(0.75);
    expect(value(await prometheus.query('extscope_alert_deliveries_total{receiver="webhook",result="sent"}'))).toBe(1);
  });
});
