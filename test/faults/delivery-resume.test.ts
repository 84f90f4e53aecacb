import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type WebhookReceiver, startReceiver } from '../collector/alerting/delivery/receiver.js';
import { send } from '../collector/alerting/helpers.js';
import { type ChildCollector, getJson, spawnCollector, tempDir } from '../collector/helpers/collector.js';
import { advertisedPoint, metricsRequest, msToNs, postMetrics } from '../collector/helpers/otlp.js';

/**
 * A webhook notification the collector could not deliver before it stopped: killed (-9) while retrying, or shut
 * down with it still waiting. Before, its row stayed `queued`/`retrying`/`abandoned` in the delivery log for ever
 * and the receiver never heard of the firing alert: the restarted collector resumed the alert's state, so made no
 * new transition, and the retry queue is in memory. Now the next start sends it again, the same body under the
 * same idempotency key. A full queue killed -9 leaves more unfinished than one queue holds (1,000 waiting and the 2
 * in flight): the next start read the log once, a queue's worth, and the other 2 stayed `queued` for ever; what one
 * read has no room for is now read once the queue has drained.
 */

const SECRET = 'resume-webhook-secret-0123456789';

/** Services with fleet skew, each one firing notification: more than the queue holds. */
const SERVICES = 1100;
const QUEUE_CAPACITY = 1000;
const CONCURRENCY = 2;

interface Delivery {
  transitionId: string;
  state: string;
  attempts: number;
  to: string;
}

interface Message {
  id: string;
  transition: { from: string; to: string };
}

describe('unfinished webhook notifications are resumed at start', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let receiver: WebhookReceiver;
  let collector: ChildCollector | undefined;
  /** What the receiver answers now (0: it hangs). */
  let status = 503;
  beforeEach(async () => {
    temp = await tempDir();
    status = 503;
    receiver = await startReceiver(() => status);
  });
  afterEach(async () => {
    collector?.child.kill('SIGKILL');
    await collector?.exited;
    collector = undefined;
    await receiver.close();
    await temp.cleanup();
  });

  const messages = (): Message[] => receiver.requests.map((request) => JSON.parse(request.body) as Message);
  const deliveries = async (url: string): Promise<Delivery[]> => (await getJson<{ deliveries: Delivery[] }>(`${url}/api/v1/alerts/deliveries`)).body.deliveries;

  for (const stop of ['SIGKILL', 'SIGTERM'] as const) {
    it(
      `stopped by ${stop} while the receiver was down: the restarted collector sends the firing notification again, once, and logs it delivered`,
      { timeout: 90_000 },
      async () => {
        const rules = join(temp.dir, 'rules.yaml');
        await writeFile(rules, 'interval: 1s\nrules:\n  - { name: skew, kind: advertisement_skew, for: 0s }\n');
        const dbPath = join(temp.dir, 'c.db');
        const env = { EXTSCOPE_RULES: rules, EXTSCOPE_WEBHOOK_URL: receiver.url, EXTSCOPE_WEBHOOK_SECRET: SECRET };
        const first = await spawnCollector(dbPath, [], env);
        collector = first;
        const atMs = Date.now() - 60_000;
        await send(first.url, { service: 'resumed', instance: 'r-1', atMs, advertised: [{ id: 'com.example/a' }] });
        await send(first.url, { service: 'resumed', instance: 'r-2', atMs, advertised: [{ id: 'com.example/a' }, { id: 'com.example/b' }] });
        // The firing notification was tried (answered 503) and is waiting for its retry.
        await expect
          .poll(async () => (await deliveries(first.url)).map(({ state, to }) => `${to} ${state}`), { timeout: 30_000, interval: 100 })
          .toEqual(['firing retrying']);
        const [firing] = await deliveries(first.url);
        const id = (firing as Delivery).transitionId;

        first.child.kill(stop);
        await first.exited;
        collector = undefined;
        // Every attempt so far was of that one notification, and each was answered 503.
        const triedBefore = receiver.requests.length;
        expect(triedBefore).toBeGreaterThanOrEqual(1);
        expect(messages().every((message) => message.id === id)).toBe(true);
        status = 204;
        const second = await spawnCollector(dbPath, [], env);
        collector = second;
        await expect
          .poll(async () => (await deliveries(second.url)).map(({ state, to }) => `${to} ${state}`), { timeout: 30_000, interval: 100 })
          .toEqual(['firing delivered']);
        const after = messages().slice(triedBefore);
        // Delivered once after the restart (answered 204), as the same notification; nothing else was sent.
        expect(after.map((message) => `${message.id} ${message.transition.from}>${message.transition.to}`)).toEqual([`${id} inactive>firing`]);
        expect(receiver.requests.at(-1)?.headers['idempotency-key']).toBe(id);
        const [delivered] = await deliveries(second.url);
        expect(delivered?.attempts).toBe(triedBefore + 1);
        expect(second.output.join('')).toContain('resuming 1 unfinished notifications from the delivery log');
      },
    );
  }

  const count = async (url: string, state: string): Promise<number> =>
    (await getJson<{ deliveries: unknown[] }>(`${url}/api/v1/alerts/deliveries?state=${state}&limit=1000`)).body.deliveries.length;

  it(
    `${SERVICES} firing notifications, the receiver hanging, kill -9: after a restart every unfinished one is delivered and none stays queued`,
    { timeout: 240_000 },
    async () => {
      status = 0;
      const rules = join(temp.dir, 'rules.yaml');
      await writeFile(rules, 'interval: 1s\nrules:\n  - { name: skew, kind: advertisement_skew, for: 0s }\n');
      const dbPath = join(temp.dir, 'c.db');
      const env = { EXTSCOPE_RULES: rules, EXTSCOPE_WEBHOOK_URL: receiver.url, EXTSCOPE_WEBHOOK_SECRET: SECRET };
      const first = await spawnCollector(dbPath, [], env);
      collector = first;
      const timeNs = msToNs(Date.now() - 60_000);
      const resources = Array.from({ length: SERVICES }, (_, index) => [
        { resource: { service: `svc-${index}`, instance: `svc-${index}-a` }, advertised: [advertisedPoint({ id: 'com.example/a', fingerprint: 'f', timeNs })] },
        {
          resource: { service: `svc-${index}`, instance: `svc-${index}-b` },
          advertised: [advertisedPoint({ id: 'com.example/a', fingerprint: 'f', timeNs }), advertisedPoint({ id: 'com.example/b', fingerprint: 'f', timeNs })],
        },
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
      const unfinished = new Set(
        db.prepare("SELECT transition_id FROM alert_deliveries WHERE state IN ('queued', 'retrying', 'abandoned')").pluck().all() as string[],
      );
      db.close();
      expect(unfinished.size).toBe(QUEUE_CAPACITY + CONCURRENCY);

      status = 204;
      const before = receiver.requests.length;
      const second = await spawnCollector(dbPath, [], env);
      collector = second;
      await expect.poll(async () => (await count(second.url, 'delivered')) >= QUEUE_CAPACITY, { timeout: 90_000, interval: 500 }).toBe(true);
      await expect
        .poll(async () => (await count(second.url, 'queued')) + (await count(second.url, 'retrying')) + (await count(second.url, 'abandoned')), {
          timeout: 30_000,
          interval: 500,
        })
        .toBe(0);
      const sent = new Set(receiver.requests.slice(before).map((request) => request.headers['idempotency-key'] as string));
      const missing = [...unfinished].filter((id) => !sent.has(id));
      console.log(
        `[faults] ${unfinished.size} unfinished notifications after kill -9 with a full queue: ${sent.size} sent after the restart, ${missing.length} missing`,
      );
      expect(missing).toEqual([]);
    },
  );
});
