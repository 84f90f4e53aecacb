import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type WebhookReceiver, startReceiver } from '../collector/alerting/delivery/receiver.js';
import { type ChildCollector, getJson, spawnCollector, tempDir } from '../collector/helpers/collector.js';
import { advertisedPoint, metricsRequest, msToNs, postMetrics } from '../collector/helpers/otlp.js';

/**
 * A collector killed (-9) with a full webhook queue leaves 1,002 unfinished notifications in the delivery log (1,000
 * waiting and the 2 in flight). The next start read the log once, 1,000 rows (the queue's capacity): the other 2
 * stayed `queued` for ever. Now what one read has no room for is read once the queue has drained.
 */

const SECRET = 'resume-webhook-secret-0123456789';
/** Services with fleet skew, each one firing notification: more than the queue holds. */
const SERVICES = 1100;
const QUEUE_CAPACITY = 1000;
const CONCURRENCY = 2;

describe('a full webhook queue killed -9', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let receiver: WebhookReceiver;
  let collector: ChildCollector | undefined;
  /** What the receiver answers now: 0 = hang. */
  let status = 0;
  beforeEach(async () => {
    temp = await tempDir();
    status = 0;
    receiver = await startReceiver(() => status);
  });
  afterEach(async () => {
    collector?.child.kill('SIGKILL');
    await collector?.exited;
    collector = undefined;
    await receiver.close();
    await temp.cleanup();
  });

  const count = async (url: string, state: string): Promise<number> =>
    (await getJson<{ deliveries: unknown[] }>(`${url}/api/v1/alerts/deliveries?state=${state}&limit=1000`)).body.deliveries.length;

  it(`${SERVICES} firing notifications, the receiver hanging, kill -9: after a restart every unfinished one is delivered and none stays queued`, { timeout: 240_000 }, async () => {
    const rules = join(temp.dir, 'rules.yaml');
    await writeFile(rules, 'interval: 1s\nrules:\n  - { name: skew, kind: advertisement_skew, for: 0s }\n');
    const dbPath = join(temp.dir, 'c.db');
    const env = { EXTSCOPE_RULES: rules, EXTSCOPE_WEBHOOK_URL: receiver.url, EXTSCOPE_WEBHOOK_SECRET: SECRET };
    const first = await spawnCollector(dbPath, [], env);
    collector = first;
    const timeNs = msToNs(Date.now() - 60_000);
    const resources = Array.from({ length: SERVICES }, (_, index) => [
      { resource: { service: `svc-${index}`, instance: `svc-${index}-a` }, advertised: [advertisedPoint({ id: 'com.example/a', fingerprint: 'f', timeNs })] },
      { resource: { service: `svc-${index}`, instance: `svc-${index}-b` }, advertised: [advertisedPoint({ id: 'com.example/a', fingerprint: 'f', timeNs }), advertisedPoint({ id: 'com.example/b', fingerprint: 'f', timeNs })] },
    ]).flat();
    // The first services' notifications take the attempts (which hang); the rest fill the queue behind them.
    const firstServices = resources.slice(0, 2 * CONCURRENCY);
    expect((await postMetrics(first.url, metricsRequest(...firstServices), { gzip: true })).status).toBe(200);
    await expect.poll(() => receiver.requests.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(CONCURRENCY);
    expect((await postMetrics(first.url, metricsRequest(...resources.slice(firstServices.length)), { gzip: true })).status).toBe(200);
    // Every notification made: the queue is full (the oldest dropped), two attempts hang.
    await expect.poll(() => count(first.url, 'dropped'), { timeout: 60_000, interval: 250 }).toBe(SERVICES - QUEUE_CAPACITY - CONCURRENCY);
    // The delivery log is written a moment after each change.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    first.child.kill('SIGKILL');
    await first.exited;
    collector = undefined;

    const db = new Database(dbPath, { readonly: true });
    const unfinished = new Set((db.prepare("SELECT transition_id FROM alert_deliveries WHERE state IN ('queued', 'retrying', 'abandoned')").pluck().all() as string[]));
    db.close();
    expect(unfinished.size).toBe(QUEUE_CAPACITY + CONCURRENCY);

    status = 204;
    const before = receiver.requests.length;
    const second = await spawnCollector(dbPath, [], env);
    collector = second;
    await expect.poll(async () => (await count(second.url, 'delivered')) >= QUEUE_CAPACITY, { timeout: 90_000, interval: 500 }).toBe(true);
    await expect.poll(async () => (await count(second.url, 'queued')) + (await count(second.url, 'retrying')) + (await count(second.url, 'abandoned')), { timeout: 30_000, interval: 500 }).toBe(0);
    const sent = new Set(receiver.requests.slice(before).map((request) => request.headers['idempotency-key'] as string));
    const missing = [...unfinished].filter((id) => !sent.has(id));
    console.log(`[faults] ${unfinished.size} unfinished notifications after kill -9 with a full queue: ${sent.size} sent after the restart, ${missing.length} missing`);
    expect(missing).toEqual([]);
  });
});
