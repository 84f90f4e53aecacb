import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifySignature } from '../../../../collector/alerting/delivery/index.js';
import type { WebhookBody } from '../../../../collector/alerting/delivery/index.js';
import { type TestCollector, getJson, startTestCollector, tempDir } from '../../helpers/collector.js';
import { MINUTE_NS, metricsRequest, msToNs, postMetrics, requestPoint } from '../../helpers/otlp.js';
import { alert, cycle, opened, transition } from './cycles.js';
import { type WebhookReceiver, deadUrl, eventually, startReceiver } from './receiver.js';

const SECRET = 'test-webhook-secret-0123456789abcdef';
const PUBLIC_URL = 'https://extscope.example.test/base/';

interface DeliveryJson {
  receiver: string;
  transitionId: string;
  state: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
}

async function deliveries(collector: TestCollector, query = ''): Promise<DeliveryJson[]> {
  const { status, body } = await getJson<{ deliveries: DeliveryJson[] }>(`${collector.url}/api/v1/alerts/deliveries?limit=1000${query}`);
  if (status !== 200) throw new Error(`deliveries: HTTP ${status} ${JSON.stringify(body)}`);
  return body.deliveries;
}

async function metricLine(collector: TestCollector, pattern: RegExp): Promise<number | undefined> {
  const text = await (await fetch(`${collector.url}/metrics`)).text();
  const match = pattern.exec(text);
  return match === null ? undefined : Number(match[1]);
}

/** Every message carries `X-Extscope-Timestamp` and `X-Extscope-Signature: v1=HMAC-SHA256(secret, timestamp + "." + body)`. */
function independentlySigned(headers: Record<string, unknown>, body: string): boolean {
  const timestamp = String(headers['x-extscope-timestamp']);
  const expected = `v1=${createHmac('sha256', SECRET).update(`${timestamp}.${body}`).digest('hex')}`;
  return headers['x-extscope-signature'] === expected;
}

describe('webhook delivery', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let receiver: WebhookReceiver | undefined;
  let collector: TestCollector | undefined;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await collector?.close();
    await receiver?.close();
    collector = undefined;
    receiver = undefined;
    await temp.cleanup();
  });

  it('sends exactly one signed message per transition, with the documented body, also when a cycle is handed over twice', async () => {
    receiver = await startReceiver();
    collector = await startTestCollector(temp.dir, { delivery: { webhookUrl: receiver.url, webhookSecret: SECRET, publicUrl: PUBLIC_URL } });
    const skew = alert();
    const other = alert({
      rule: 'extension-withdrawn',
      kind: 'extension_withdrawn',
      labels: { alertname: 'extension-withdrawn', severity: 'critical', service: 'billing' },
      dashboardPath: '/#/extensions?id=com.example%2Freplay',
    });
    const pending = opened(skew);
    const firing = transition(pending.alert, 'firing');
    const otherPending = opened(other);
    const resolved = transition(firing.alert, 'resolved');
    const cycles = [cycle([pending, otherPending], []), cycle([firing], [firing.alert]), cycle([resolved], [])];
    for (const each of cycles) collector.notifier.deliver(each);
    collector.notifier.deliver(cycles[1]!);
    const ids = [pending.id, otherPending.id, firing.id, resolved.id];

    const log = await eventually(async () => {
      const rows = await deliveries(collector!, '&receiver=webhook');
      return rows.length === ids.length && rows.every((row) => row.state === 'delivered') ? rows : undefined;
    }, 'four delivered notifications');
    expect(log.map((row) => row.transitionId).sort()).toEqual([...ids].sort());
    expect(log.every((row) => row.attempts === 1 && row.lastStatus === 204 && row.deliveredAt !== null)).toBe(true);

    expect(receiver.requests).toHaveLength(4);
    const bodies = receiver.requests.map((request) => JSON.parse(request.body) as WebhookBody);
    expect(bodies.map((body) => body.id).sort()).toEqual([...ids].sort());
    for (const [index, request] of receiver.requests.entries()) {
      expect(independentlySigned(request.headers, request.body)).toBe(true);
      expect(
        verifySignature(
          SECRET,
          request.body,
          { timestamp: request.headers['x-extscope-timestamp'] as string, signature: request.headers['x-extscope-signature'] as string },
          Date.now(),
        ),
      ).toEqual({ ok: true });
      expect(request.headers['idempotency-key']).toBe(bodies[index]!.id);
      expect(request.headers['content-type']).toBe('application/json');
    }
    const firingBody = bodies.find((body) => body.id === firing.id)!;
    expect(firingBody).toEqual({
      version: '1',
      id: firing.id,
      transition: { from: 'pending', to: 'firing', at: new Date(firing.atMs).toISOString() },
      alert: {
        fingerprint: skew.fingerprint,
        rule: 'advertisement-skew',
        kind: 'advertisement_skew',
        severity: 'warning',
        state: 'firing',
        activeSince: new Date(pending.atMs).toISOString(),
        firingSince: new Date(firing.atMs).toISOString(),
        resolvedAt: null,
      },
      labels: skew.labels,
      annotations: { ...skew.annotations, dashboard_url: 'https://extscope.example.test/base/#/fleet?service=api' },
      dashboardUrl: 'https://extscope.example.test/base/#/fleet?service=api',
    });
    expect(bodies.find((body) => body.id === resolved.id)).toMatchObject({
      transition: { from: 'firing', to: 'resolved' },
      alert: { state: 'resolved', resolvedAt: new Date(resolved.atMs).toISOString() },
    });
    expect(await metricLine(collector, /extscope_alert_deliveries_total\{receiver="webhook",result="sent"\} (\d+)/)).toBe(4);
  });

  it('a receiver answering 503 gets the same message again, with backoff, until it takes it: one delivered row, attempts counted', async () => {
    receiver = await startReceiver((n) => (n <= 2 ? 503 : 200));
    collector = await startTestCollector(temp.dir, {
      delivery: { webhookUrl: receiver.url, webhookSecret: SECRET, retry: { initialDelayMs: 20, maxDelayMs: 100, maxAttempts: 5 } },
    });
    const pending = opened(alert());
    collector.notifier.deliver(cycle([pending], []));

    const [row] = await eventually(async () => {
      const rows = await deliveries(collector!, `&transition=${pending.id}`);
      return rows[0]?.state === 'delivered' ? rows : undefined;
    }, 'the notification delivered');
    expect(row).toMatchObject({ receiver: 'webhook', attempts: 3, lastStatus: 200, lastError: null });
    expect(receiver.requests).toHaveLength(3);
    expect(new Set(receiver.requests.map((request) => request.body)).size).toBe(1);
    expect(receiver.requests.every((request) => independentlySigned(request.headers, request.body))).toBe(true);
    expect(await metricLine(collector, /extscope_alert_deliveries_total\{receiver="webhook",result="retried"\} (\d+)/)).toBe(2);
    expect(await metricLine(collector, /extscope_alert_deliveries_total\{receiver="webhook",result="sent"\} (\d+)/)).toBe(1);
  });

  it('a receiver that is down gets retries up to the cap (seen in the delivery log) while every export sent meanwhile is answered 200', async () => {
    const url = await deadUrl();
    collector = await startTestCollector(temp.dir, {
      delivery: { webhookUrl: url, webhookSecret: SECRET, retry: { initialDelayMs: 50, maxDelayMs: 400, maxAttempts: 6 } },
    });
    const pending = opened(alert());
    collector.notifier.deliver(cycle([pending], []));

    const statuses: number[] = [];
    const attemptsSeen = new Set<number>();
    let final: DeliveryJson | undefined;
    for (let round = 0; round < 2000 && final === undefined; round++) {
      const t = msToNs(Date.now());
      const response = await postMetrics(
        collector.url,
        metricsRequest({
          resource: { instance: 'i-1' },
          requests: [requestPoint({ client: 'probe', count: 1, startNs: t - MINUTE_NS + BigInt(round), timeNs: t + BigInt(round) })],
        }),
      );
      statuses.push(response.status);
      await response.arrayBuffer();
      const [row] = await deliveries(collector, `&transition=${pending.id}`);
      if (row !== undefined) attemptsSeen.add(row.attempts);
      if (row?.state === 'failed') final = row;
    }
    expect(final).toMatchObject({ state: 'failed', attempts: 6, nextAttemptAt: null, deliveredAt: null });
    expect(final?.lastError).toMatch(/ECONNREFUSED/);
    // The log went through the retries (a row per attempt is rewritten, so not every value need be seen).
    expect(attemptsSeen.size).toBeGreaterThan(2);
    expect(statuses.length).toBeGreaterThan(0);
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(await metricLine(collector, /extscope_alert_deliveries_total\{receiver="webhook",result="retried"\} (\d+)/)).toBe(5);
    expect(await metricLine(collector, /extscope_alert_deliveries_total\{receiver="webhook",result="failed"\} (\d+)/)).toBe(1);
  });

  it('a full queue drops the oldest waiting notifications, logs them as dropped and counts them', async () => {
    const url = await deadUrl();
    collector = await startTestCollector(temp.dir, {
      delivery: { webhookUrl: url, webhookSecret: SECRET, queueCapacity: 2, retry: { initialDelayMs: 60_000, maxDelayMs: 60_000, maxAttempts: 3 } },
    });
    const transitions = ['a', 'b', 'c', 'd', 'e'].map((service) =>
      opened(alert({ labels: { alertname: 'advertisement-skew', severity: 'warning', service } })),
    );
    collector.notifier.deliver(cycle(transitions, []));

    const rows = await eventually(async () => {
      const all = await deliveries(collector!);
      return all.length === 5 && all.filter((row) => row.state === 'retrying').length === 2 ? all : undefined;
    }, 'two notifications waiting for a retry');
    const state = new Map(rows.map((row) => [row.transitionId, row.state]));
    expect(transitions.map((each) => state.get(each.id))).toEqual(['dropped', 'dropped', 'dropped', 'retrying', 'retrying']);
    expect(await metricLine(collector, /extscope_alert_deliveries_total\{receiver="webhook",result="dropped"\} (\d+)/)).toBe(3);

    await collector.close();
    const db = await startTestCollector(temp.dir);
    try {
      const after = new Map((await deliveries(db)).map((row) => [row.transitionId, row.state]));
      // Closing stops the retries; what was still waiting is marked so, not left "retrying" for ever.
      expect(transitions.map((each) => after.get(each.id))).toEqual(['dropped', 'dropped', 'dropped', 'abandoned', 'abandoned']);
    } finally {
      await db.close();
    }
  });

  it('closing does not wait for a receiver that never answers: the request is cancelled and the notification marked abandoned', async () => {
    receiver = await startReceiver(() => 0);
    collector = await startTestCollector(temp.dir, { delivery: { webhookUrl: receiver.url, webhookSecret: SECRET, requestTimeoutMs: 600_000 } });
    const pending = opened(alert());
    collector.notifier.deliver(cycle([pending], []));
    await eventually(async () => (receiver!.requests.length === 1 ? true : undefined), 'the request to arrive');
    await collector.close();
    const reopened = await startTestCollector(temp.dir);
    try {
      expect(await deliveries(reopened, `&transition=${pending.id}`)).toMatchObject([{ state: 'abandoned', attempts: 1 }]);
    } finally {
      await reopened.close();
    }
  });

  it('the API filters the delivery log and refuses an unknown state', async () => {
    collector = await startTestCollector(temp.dir);
    expect(await deliveries(collector)).toEqual([]);
    const bad = await getJson(`${collector.url}/api/v1/alerts/deliveries?state=lost`);
    expect(bad.status).toBe(400);
  });
});
