/** GET /api/v1/alerts over HTTP: filters, pages, parameter checks and the read token. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCollector, getJson, startTestCollector, tempDir } from '../helpers/collector.js';
import { type AlertsJson, send } from './helpers.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const MINUTE = 60_000;
const NOW = Date.UTC(2026, 5, 1, 12, 0, 30);
const TOKEN = 'read-token-0123456789abcdef';

describe('GET /api/v1/alerts', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;
  const clock = { now: NOW - 20 * MINUTE };
  const get = (query: string): Promise<{ status: number; body: AlertsJson }> => getJson<AlertsJson>(`${collector.url}/api/v1/alerts${query}`, TOKEN);

  beforeAll(async () => {
    temp = await tempDir();
    const rulesPath = join(temp.dir, 'rules.yaml');
    await writeFile(
      rulesPath,
      'rules:\n  - { name: stale, kind: stale_instance, after: 10m, minUptime: 0s }\n  - { name: stale-later, kind: stale_instance, after: 10m, minUptime: 0s, for: 1h }\n',
    );
    collector = await startTestCollector(temp.dir, { rulesPath, clock: () => clock.now, alertIntervalMs: 3_600_000, readToken: TOKEN });
    // Three silent instances (two services); one reports again, so its alerts resolve.
    for (const [service, instance] of [
      ['shop', 'shop-1'],
      ['shop', 'shop-2'],
      ['cart', 'cart-1'],
    ])
      await send(collector.url, { service: service ?? '', instance, atMs: clock.now, requests: [{ count: 1 }] });
    clock.now = NOW - 5 * MINUTE;
    await collector.alerting.evaluate();
    await send(collector.url, { service: 'shop', instance: 'shop-2', atMs: clock.now, requests: [{ count: 1 }] });
    clock.now = NOW;
    await collector.alerting.evaluate();
  });
  afterAll(async () => {
    await collector?.close();
    await temp?.cleanup();
  });

  it('needs the read token', async () => {
    expect((await getJson(`${collector.url}/api/v1/alerts`)).status).toBe(401);
    expect((await get('')).status).toBe(200);
  });

  it('filters by state, rule and service; pages with total and nextOffset', async () => {
    const all = (await get('')).body;
    expect(all.total).toBe(6);
    expect(all.alerts.map((alert) => `${alert.rule} ${alert.state} ${alert.labels['instance']}`)).toEqual([
      'stale firing cart-1',
      'stale firing shop-1',
      'stale-later pending cart-1',
      'stale-later pending shop-1',
      'stale resolved shop-2',
      'stale-later resolved shop-2',
    ]);
    expect(all.evaluation).toEqual({
      rulesFile: expect.stringMatching(/rules\.yaml$/),
      intervalSeconds: 3600,
      rules: 2,
      lastEvaluation: new Date(NOW).toISOString(),
    });
    expect((await get('?state=active')).body.total).toBe(4);
    expect((await get('?state=firing&service=shop')).body.alerts.map((alert) => alert.labels['instance'])).toEqual(['shop-1']);
    expect(
      (await get('?state=resolved&rule=stale-later')).body.alerts.map((alert) => [alert.labels['instance'], alert.transitions.map((t) => `${t.from}>${t.to}`)]),
    ).toEqual([['shop-2', ['inactive>pending', 'pending>resolved']]]);
    const first = (await get('?limit=4')).body;
    expect([first.alerts.length, first.nextOffset]).toEqual([4, 4]);
    const last = (await get('?limit=4&offset=4')).body;
    expect([last.alerts.length, last.nextOffset, last.total]).toEqual([2, null, 6]);
  });

  it('refuses unknown states, parameters and limits with 400', async () => {
    for (const query of ['?state=open', '?limit=0', '?limit=501', '?offset=-1', '?colour=red']) {
      expect((await get(query)).status, query).toBe(400);
    }
  });
});
