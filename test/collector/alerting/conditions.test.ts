/**
 * Each rule kind, fed over OTLP to a real collector on its own clock: the condition makes the alert, and the
 * same data just below the rule's threshold (another service, client or instance) makes none.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type TestCollector, getJson, tempDir } from '../helpers/collector.js';
import { active, alertingCollector, alerts, send } from './helpers.js';

const A = 'com.example/a';
const B = 'com.example/b';
const MINUTE = 60_000;
const NOW = Date.UTC(2026, 5, 1, 12, 0, 30);

describe('alert rule conditions', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector | undefined;
  let clock: { now: number };
  const start = async (rules: string): Promise<string> => {
    ({ collector, clock } = await alertingCollector(temp.dir, rules, NOW));
    return collector.url;
  };
  const evaluate = async (): Promise<void> => {
    await collector?.alerting.evaluate();
  };

  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await collector?.close();
    collector = undefined;
    await temp.cleanup();
  });

  it('advertisement_skew: live instances of one service advertising different ids or settings; identical ones stay quiet', async () => {
    const url = await start('rules:\n  - { name: skew, kind: advertisement_skew, for: 0s }\n');
    await send(url, { service: 'ids', instance: 'ids-1', atMs: NOW - MINUTE, advertised: [{ id: A }] });
    await send(url, { service: 'ids', instance: 'ids-2', atMs: NOW - MINUTE, advertised: [{ id: A }, { id: B }] });
    await send(url, { service: 'settings', instance: 'settings-1', atMs: NOW - MINUTE, advertised: [{ id: A, fingerprint: 'f1' }] });
    await send(url, { service: 'settings', instance: 'settings-2', atMs: NOW - MINUTE, advertised: [{ id: A, fingerprint: 'f2' }] });
    await send(url, { service: 'same', instance: 'same-1', atMs: NOW - MINUTE, advertised: [{ id: A }, { id: B }] });
    await send(url, { service: 'same', instance: 'same-2', atMs: NOW - MINUTE, advertised: [{ id: B }, { id: A }] });
    await send(url, { service: 'alone', instance: 'alone-1', atMs: NOW - MINUTE, advertised: [{ id: A }] });
    await evaluate();
    expect(await active(url)).toEqual(['skew firing {"service":"ids"}', 'skew firing {"service":"settings"}']);
    const [alert] = (await alerts(url, '?service=ids')).alerts;
    // 1 vs 1 is a split, not a majority: the side that lacks the id is named, the other is not.
    expect(alert?.annotations['summary']).toBe(`1 of 2 live instances of ids lacks ${B}: ids-1`);
    expect(alert?.annotations['description']).toBe(`1 of 2 live instances of ids lacks ${B}: ids-1. No majority: the live instances are split 1 vs 1.`);
    expect(alert?.dashboardPath).toBe('/?view=fleet&service=ids');
    const [settings] = (await alerts(url, '?service=settings')).alerts;
    expect(settings?.annotations['description']).toBe(
      `1 of 2 live instances of settings advertises other settings for ${A}: settings-1; 1 of 2 live instances of settings advertises other settings for ${A}: settings-2. No majority: the live instances are split 1 vs 1.`,
    );
  });

  it('advertisement_skew names the odd ones out against the majority, with counts; the majority is not named', async () => {
    const url = await start('rules:\n  - { name: skew, kind: advertisement_skew, for: 0s }\n');
    for (const instance of ['shop-a', 'shop-c', 'shop-d'])
      await send(url, { service: 'shop', instance, atMs: NOW - MINUTE, advertised: [{ id: A }, { id: B }] });
    await send(url, { service: 'shop', instance: 'shop-b', atMs: NOW - MINUTE, advertised: [{ id: A }] });
    await send(url, { service: 'shop', instance: 'shop-e', atMs: NOW - MINUTE, advertised: [{ id: A }, { id: B, fingerprint: 'other' }] });
    await evaluate();
    const [alert] = (await alerts(url, '?service=shop')).alerts;
    expect(alert?.annotations['summary']).toBe(`1 of 5 live instances of shop lacks ${B}: shop-b`);
    expect(alert?.annotations['description']).toBe(
      `1 of 5 live instances of shop lacks ${B}: shop-b; 1 of 5 live instances of shop advertises other settings for ${B}: shop-e. The other 3 advertise the same set.`,
    );
    expect(alert?.annotations['description']).not.toMatch(/shop-a|shop-c|shop-d/);
  });

  it('extension_withdrawn: an id a service (or one instance) advertised before and no longer does; one still advertised stays quiet', async () => {
    const url = await start(
      [
        'rules:',
        '  - { name: by-service, kind: extension_withdrawn, for: 0s }',
        '  - { name: by-instance, kind: extension_withdrawn, for: 0s, level: instance }',
        '',
      ].join('\n'),
    );
    await send(url, { service: 'shop', instance: 'shop-1', atMs: NOW - 3 * MINUTE, advertised: [{ id: A }, { id: B }] });
    await send(url, { service: 'shop', instance: 'shop-1', atMs: NOW - MINUTE, advertised: [{ id: A }] });
    // cart: cart-1 stops advertising B, but cart-2 still does: withdrawn by one instance, not by the service.
    await send(url, { service: 'cart', instance: 'cart-1', atMs: NOW - 3 * MINUTE, advertised: [{ id: A }, { id: B }] });
    await send(url, { service: 'cart', instance: 'cart-1', atMs: NOW - MINUTE, advertised: [{ id: A }] });
    await send(url, { service: 'cart', instance: 'cart-2', atMs: NOW - MINUTE, advertised: [{ id: A }, { id: B }] });
    await send(url, { service: 'steady', instance: 'steady-1', atMs: NOW - 3 * MINUTE, advertised: [{ id: A }] });
    await send(url, { service: 'steady', instance: 'steady-1', atMs: NOW - MINUTE, advertised: [{ id: A }] });
    await evaluate();
    expect(await active(url)).toEqual([
      `by-instance firing {"service":"cart","instance":"cart-1","extension":"${B}"}`,
      `by-instance firing {"service":"shop","instance":"shop-1","extension":"${B}"}`,
      `by-service firing {"service":"shop","extension":"${B}"}`,
    ]);
  });

  it('negotiation_drop: a share down by the threshold against the baseline fires; one point less, or too few requests, stays quiet', async () => {
    const url = await start('rules:\n  - { name: drop, kind: negotiation_drop, for: 0s, window: 10m, baseline: 1h, drop: 20, minRequests: 100 }\n');
    const traffic = async (service: string, baseline: [number, number], recent: [number, number]): Promise<void> => {
      for (const [atMs, [requests, negotiated]] of [
        [NOW - 30 * MINUTE, baseline],
        [NOW - 5 * MINUTE, recent],
      ] as const) {
        await send(url, {
          service,
          atMs,
          requests: [{ count: requests }],
          extensions: [{ id: A, count: negotiated, clientDeclared: true, serverDeclared: true }],
        });
      }
    };
    await traffic('down-20', [100, 80], [100, 60]);
    await traffic('down-19', [100, 80], [100, 61]);
    await traffic('quiet-hour', [100, 80], [99, 0]);
    await evaluate();
    expect(await active(url)).toEqual([`drop firing {"service":"down-20","extension":"${A}"}`]);
    const [alert] = (await alerts(url)).alerts;
    expect(alert?.annotations['summary']).toBe(`${A} negotiated on 60.0% of down-20's requests, down from 80.0%`);
    // The recent window in whole elapsed minutes: [11:50, 12:00) at 12:00:30.
    const range = `range=custom&from=${encodeURIComponent('2026-06-01T11:50:00.000Z')}&to=${encodeURIComponent('2026-06-01T12:00:00.000Z')}`;
    expect(alert?.dashboardPath).toBe(`/?view=extension&ext=${encodeURIComponent(A)}&service=down-20&${range}`);
  });

  it('an alert’s figure is the figure of the view it links to: the matrix API over the same window, with requests no server saw left out of both', async () => {
    const url = await start('rules:\n  - { name: drop, kind: negotiation_drop, for: 0s, window: 10m, baseline: 1h, drop: 20, minRequests: 10 }\n');
    await send(url, {
      service: 'shop',
      atMs: NOW - 30 * MINUTE,
      requests: [{ count: 40 }],
      extensions: [{ id: A, count: 36, clientDeclared: true, serverDeclared: true }],
    });
    // Recent: 30 requests, 9 negotiated. 10 more were answered before any server instance existed: over all 40 the
    // share would read 22.5 %, over the 30 whose server is known it is 30 %.
    await send(url, {
      service: 'shop',
      atMs: NOW - 5 * MINUTE,
      requests: [{ count: 30 }],
      extensions: [{ id: A, count: 9, clientDeclared: true, serverDeclared: true }],
    });
    await send(url, { service: 'shop', instance: 'early', atMs: NOW - 5 * MINUTE, requests: [{ count: 10, serverDeclaration: 'unknown' }] });
    await evaluate();
    const [alert] = (await alerts(url)).alerts;
    expect(alert?.annotations['summary']).toBe(`${A} negotiated on 30.0% of shop's requests, down from 90.0%`);
    const linked = new URLSearchParams(alert?.dashboardPath.slice(2));
    expect(linked.get('range')).toBe('custom');
    const view = await getJson<{
      totals: { id: string; negotiatedShare: number | null; known: number }[];
      rows: { requests: number; serverUnknown: number }[];
    }>(
      `${url}/api/v1/matrix?${new URLSearchParams({ from: linked.get('from') ?? '', to: linked.get('to') ?? '', service: linked.get('service') ?? '' }).toString()}`,
    );
    expect(view.status).toBe(200);
    const cell = view.body.totals.find((entry) => entry.id === A);
    expect(view.body.rows.reduce((sum, row) => sum + row.serverUnknown, 0)).toBe(10);
    expect(cell?.known).toBe(30);
    expect(`${((cell?.negotiatedShare ?? 0) * 100).toFixed(1)}%`).toBe('30.0%');
  });

  it('negotiation_drop per client: only the client whose share fell', async () => {
    const url = await start(
      'rules:\n  - { name: drop, kind: negotiation_drop, for: 0s, window: 10m, baseline: 1h, drop: 20, minRequests: 10, perClient: true }\n',
    );
    for (const [atMs, alpha, beta] of [
      [NOW - 30 * MINUTE, 10, 10],
      [NOW - 5 * MINUTE, 0, 10],
    ] as const) {
      await send(url, {
        service: 'shop',
        atMs,
        requests: [
          { client: 'alpha', count: 10 },
          { client: 'beta', count: 10 },
        ],
        extensions: [
          { id: A, client: 'alpha', count: alpha, clientDeclared: true, serverDeclared: true },
          { id: A, client: 'beta', count: beta, clientDeclared: true, serverDeclared: true },
        ],
      });
    }
    await evaluate();
    expect(await active(url)).toEqual([`drop firing {"service":"shop","client":"alpha","extension":"${A}"}`]);
  });

  it('scope by client: a drop of a client outside the scope alerts nobody; a drop within it, counted over the scoped clients only, does', async () => {
    const url = await start(
      [
        'rules:',
        '  - { name: beta-only, kind: negotiation_drop, for: 0s, window: 10m, baseline: 1h, drop: 20, minRequests: 10, scope: { clients: [beta] } }',
        '  - { name: alpha-only, kind: negotiation_drop, for: 0s, window: 10m, baseline: 1h, drop: 40, minRequests: 10, scope: { clients: [alpha] } }',
        '',
      ].join('\n'),
    );
    // alpha: 100% → 50%; beta unchanged. Over both clients the share fell 25 points only.
    for (const [atMs, alpha] of [
      [NOW - 30 * MINUTE, 10],
      [NOW - 5 * MINUTE, 5],
    ] as const) {
      await send(url, {
        service: 'shop',
        atMs,
        requests: [
          { client: 'alpha', count: 10 },
          { client: 'beta', count: 10 },
        ],
        extensions: [
          { id: A, client: 'alpha', count: alpha, clientDeclared: true, serverDeclared: true },
          { id: A, client: 'beta', count: 10, clientDeclared: true, serverDeclared: true },
        ],
      });
    }
    await evaluate();
    expect(await active(url)).toEqual([`alpha-only firing {"service":"shop","extension":"${A}"}`]);
  });

  it('client_regression: the newest version of a client no longer declaring what the previous one did; too few requests of either version stays quiet', async () => {
    const url = await start('rules:\n  - { name: regression, kind: client_regression, minRequests: 10 }\n');
    await send(url, {
      service: 'shop',
      atMs: NOW - 20 * MINUTE,
      requests: [
        { client: 'alpha', version: '1.9.0', count: 10 },
        { client: 'beta', version: '2.0.0', count: 10 },
        { client: 'gamma', version: '3.0.0', count: 1 },
      ],
      extensions: [
        { id: A, client: 'alpha', version: '1.9.0', count: 10, clientDeclared: true, serverDeclared: true },
        { id: A, client: 'beta', version: '2.0.0', count: 10, clientDeclared: true, serverDeclared: true },
        // gamma 3.0.0 declared A on one request only: its successor not declaring it is no regression.
        { id: A, client: 'gamma', version: '3.0.0', count: 1, clientDeclared: true, serverDeclared: true },
      ],
    });
    // 1.10.0 is newer than 1.9.0 (numerically); it sends 10 requests without A. beta 2.1.0: only 9.
    await send(url, {
      service: 'shop',
      atMs: NOW - 2 * MINUTE,
      requests: [
        { client: 'alpha', version: '1.10.0', count: 10 },
        { client: 'beta', version: '2.1.0', count: 9 },
        { client: 'gamma', version: '3.1.0', count: 50 },
      ],
      extensions: [
        { id: A, client: 'alpha', version: '1.10.0', count: 10, clientDeclared: false, serverDeclared: true },
        { id: A, client: 'beta', version: '2.1.0', count: 9, clientDeclared: false, serverDeclared: true },
        { id: A, client: 'gamma', version: '3.1.0', count: 50, clientDeclared: false, serverDeclared: true },
      ],
    });
    await evaluate();
    expect(await active(url)).toEqual([`regression firing {"client":"alpha","version":"1.10.0","previous_version":"1.9.0","extension":"${A}"}`]);
    // Linked to the matrix by version over the window read: the default 7 days of whole minutes, ending at 12:00.
    expect((await alerts(url)).alerts[0]?.dashboardPath).toBe(
      `/?view=matrix&group=client_version&rows=alpha&range=custom&from=${encodeURIComponent('2026-05-25T12:00:00.000Z')}&to=${encodeURIComponent('2026-06-01T12:00:00.000Z')}`,
    );
  });

  it('client_regression: versions in semver order, a pre-release before its release: a release candidate that drops an id is no regression of the release that declares it', async () => {
    const url = await start('rules:\n  - { name: regression, kind: client_regression, minRequests: 10 }\n');
    const TASKS = 'io.modelcontextprotocol/tasks';
    const version = (client: string, clientVersion: string, declared: boolean) => ({
      requests: [{ client, version: clientVersion, count: 12 }],
      extensions: [{ id: TASKS, client, version: clientVersion, count: 12, clientDeclared: declared, serverDeclared: true }],
    });
    // probe-app: 1.9.0 and 1.10.0 declare tasks, 1.10.0-rc.1 does not (ordered by text, the rc came last and fired).
    await send(url, { service: 'shop', atMs: NOW - 30 * MINUTE, ...version('probe-app', '1.9.0', true) });
    await send(url, { service: 'shop', atMs: NOW - 20 * MINUTE, ...version('probe-app', '1.10.0-rc.1', false) });
    await send(url, { service: 'shop', atMs: NOW - 10 * MINUTE, ...version('probe-app', '1.10.0', true) });
    // real-app: 1.9.0 declares tasks, 1.10.0 does not (and a leading v is the same version scheme).
    await send(url, { service: 'shop', atMs: NOW - 30 * MINUTE, ...version('real-app', 'v1.9.0', true) });
    await send(url, { service: 'shop', atMs: NOW - 10 * MINUTE, ...version('real-app', '1.10.0', false) });
    await evaluate();
    expect(await active(url)).toEqual([`regression firing {"client":"real-app","version":"1.10.0","previous_version":"v1.9.0","extension":"${TASKS}"}`]);
  });

  it('missing_capability: -32021 answers naming an id above the rate fire; exactly at the rate stays quiet', async () => {
    const url = await start('rules:\n  - { name: required, kind: missing_capability, for: 0s, window: 5m, ratePerMinute: 1 }\n');
    const errors = async (service: string, count: number): Promise<void> => {
      await send(url, {
        service,
        atMs: NOW - 2 * MINUTE,
        requests: [{ count, outcome: 'error', statusCode: '-32021' }],
        extensions: [{ id: A, count, clientDeclared: false, serverDeclared: true, required: true }],
      });
    };
    await errors('six', 6);
    await errors('five', 5);
    await evaluate();
    expect(await active(url)).toEqual([`required firing {"service":"six","extension":"${A}"}`]);
    expect((await alerts(url)).alerts[0]?.annotations['description']).toContain('1.2 missing-capability answers per minute name');
  });

  it('new_extension_id: an id clients declare for the first time; one declared within the lookback, or only by servers, stays quiet', async () => {
    const url = await start('rules:\n  - { name: new-ids, kind: new_extension_id, window: 10m, lookback: 2h }\n');
    await send(url, {
      service: 'shop',
      atMs: NOW - 60 * MINUTE,
      requests: [{ count: 1 }],
      extensions: [{ id: A, count: 1, clientDeclared: true, serverDeclared: true }],
    });
    await send(url, {
      service: 'shop',
      atMs: NOW - 3 * MINUTE,
      requests: [{ count: 3 }],
      extensions: [
        { id: A, count: 1, clientDeclared: true, serverDeclared: true },
        { id: B, count: 1, clientDeclared: true, serverDeclared: false },
        { id: 'com.example/server-only', count: 1, clientDeclared: false, serverDeclared: true },
      ],
    });
    await evaluate();
    expect(await active(url)).toEqual([`new-ids firing {"extension":"${B}"}`]);
    expect((await alerts(url)).alerts[0]?.severity).toBe('info');
    // Once its window has passed, the id is no longer new: resolved.
    clock.now = NOW + 11 * MINUTE;
    await evaluate();
    expect(await active(url)).toEqual([]);
    expect((await alerts(url, '?state=resolved')).alerts.map((alert) => alert.labels['extension'])).toEqual([B]);
  });

  it('new_extension_id: with no traffic before the window (a new database), no id is judged new', async () => {
    const url = await start('rules:\n  - { name: new-ids, kind: new_extension_id, window: 10m, lookback: 2h }\n');
    await send(url, {
      service: 'shop',
      atMs: NOW - 3 * MINUTE,
      requests: [{ count: 1 }],
      extensions: [{ id: B, count: 1, clientDeclared: true, serverDeclared: false }],
    });
    await evaluate();
    expect(await active(url)).toEqual([]);
  });

  it('new_extension_id over a lookback read by the hour: the window is not counted as before it, the rest of the hour is', async () => {
    const url = await start('rules:\n  - { name: new-ids, kind: new_extension_id, window: 10m, lookback: 3d }\n');
    // NOW is 12:00:30: the window starts at 11:50. OLD at 11:10 lies in the hour before it; NEW at 11:57 only in the window.
    await send(url, {
      service: 'shop',
      atMs: NOW - 50 * MINUTE,
      requests: [{ count: 1 }],
      extensions: [{ id: A, count: 1, clientDeclared: true, serverDeclared: true }],
    });
    await send(url, {
      service: 'shop',
      atMs: NOW - 3 * MINUTE,
      requests: [{ count: 2 }],
      extensions: [
        { id: A, count: 1, clientDeclared: true, serverDeclared: true },
        { id: B, count: 1, clientDeclared: true, serverDeclared: true },
      ],
    });
    await evaluate();
    expect(await active(url)).toEqual([`new-ids firing {"extension":"${B}"}`]);
  });

  it('stale_instance: a long-lived instance silent for longer than the threshold, said in minutes or hours as it reads; one silent a little less, one that lived shorter than minUptime, a stdio session and an instance whose last export said it ended stay quiet', async () => {
    const url = await start('rules:\n  - { name: stale, kind: stale_instance, after: 10m, minUptime: 30m, lookback: 3d }\n');
    // cart-old reported for 40 minutes and fell silent 26 hours before NOW.
    for (const ago of [26 * 60 + 40, 26 * 60]) {
      clock.now = NOW - ago * MINUTE;
      await send(url, { service: 'cart', instance: 'cart-old', atMs: clock.now, requests: [{ count: 1 }] });
    }
    // The others fall silent 11 minutes before NOW; shop-old had reported for 30 minutes, shop-short for 29.
    for (const [instance, from, transport] of [
      ['shop-old', 41, 'http'],
      ['shop-session', 41, 'stdio'],
      ['shop-ended', 41, 'http'],
      ['shop-short', 40, 'http'],
      ['shop-recent', 39, 'http'],
    ] as const) {
      clock.now = NOW - from * MINUTE;
      await send(url, { service: 'shop', instance, transport, atMs: clock.now, requests: [{ count: 1 }] });
    }
    clock.now = NOW - 11 * MINUTE;
    await send(url, { service: 'shop', instance: 'shop-old', transport: 'http', atMs: clock.now + 1, requests: [{ count: 1 }] });
    await send(url, { service: 'shop', instance: 'shop-session', transport: 'stdio', atMs: clock.now + 1, requests: [{ count: 1 }] });
    await send(url, { service: 'shop', instance: 'shop-ended', transport: 'http', atMs: clock.now + 1, requests: [{ count: 1 }], ended: true });
    await send(url, { service: 'shop', instance: 'shop-short', transport: 'http', atMs: clock.now + 1, requests: [{ count: 1 }] });
    clock.now = NOW - 9 * MINUTE;
    await send(url, { service: 'shop', instance: 'shop-recent', transport: 'http', atMs: clock.now, requests: [{ count: 1 }] });
    clock.now = NOW;
    await evaluate();
    expect(await active(url)).toEqual(['stale firing {"service":"cart","instance":"cart-old"}', 'stale firing {"service":"shop","instance":"shop-old"}']);
    const summaries = (await alerts(url)).alerts.map((alert) => alert.annotations['summary']).sort();
    expect(summaries).toEqual(['Instance cart-old of cart has not reported for 26 hours', 'Instance shop-old of shop has not reported for 11 minutes']);
    expect((await alerts(url, '?service=shop')).alerts[0]?.dashboardPath).toBe('/?view=fleet&service=shop&instance=shop-old');
  });

  it('scope: a rule scoped to services and extension ids alerts only within them', async () => {
    const url = await start('rules:\n  - { name: withdrawn, kind: extension_withdrawn, for: 0s, scope: { services: [shop], extensions: ["' + B + '"] } }\n');
    for (const service of ['shop', 'cart']) {
      await send(url, { service, atMs: NOW - 3 * MINUTE, advertised: [{ id: A }, { id: B }, { id: 'com.example/c' }] });
      await send(url, { service, atMs: NOW - MINUTE, advertised: [] });
    }
    // An empty advertisement is no advertisement at all: advertise something else to withdraw the rest.
    for (const service of ['shop', 'cart']) await send(url, { service, atMs: NOW - MINUTE / 2, advertised: [{ id: 'com.example/d' }] });
    await evaluate();
    expect(await active(url)).toEqual([`withdrawn firing {"service":"shop","extension":"${B}"}`]);
  });
});
