import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type WebhookReceiver, startReceiver } from '../collector/alerting/delivery/receiver.js';
import { send } from '../collector/alerting/helpers.js';
import { type ChildCollector, getJson, spawnCollector, tempDir } from '../collector/helpers/collector.js';

/**
 * A webhook notification the collector could not deliver before it stopped: killed (-9) while retrying, or shut
 * down with it still waiting. Before, its row stayed `queued`/`retrying`/`abandoned` in the delivery log for ever
 * and the receiver never heard of the firing alert: the restarted collector resumed the alert's state, so made no
 * new transition, and the retry queue is in memory. Now the next start sends it again, the same body under the
 * same idempotency key.
 */

const SECRET = 'resume-webhook-secret-0123456789';

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
  /** What the receiver answers now. */
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
    it(`stopped by ${stop} while the receiver was down: the restarted collector sends the firing notification again, once, and logs it delivered`, { timeout: 90_000 }, async () => {
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
      await expect.poll(async () => (await deliveries(first.url)).map(({ state, to }) => `${to} ${state}`), { timeout: 30_000, interval: 100 }).toEqual(['firing retrying']);
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
      await expect.poll(async () => (await deliveries(second.url)).map(({ state, to }) => `${to} ${state}`), { timeout: 30_000, interval: 100 }).toEqual(['firing delivered']);
      const after = messages().slice(triedBefore);
      // Delivered once after the restart (answered 204), as the same notification; nothing else was sent.
      expect(after.map((message) => `${message.id} ${message.transition.from}>${message.transition.to}`)).toEqual([`${id} inactive>firing`]);
      expect(receiver.requests.at(-1)?.headers['idempotency-key']).toBe(id);
      const [delivered] = await deliveries(second.url);
      expect(delivered?.attempts).toBe(triedBefore + 1);
      expect(second.output.join('')).toContain('resuming 1 unfinished notifications from the delivery log');
    });
  }
});
