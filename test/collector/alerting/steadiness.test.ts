/**
 * Alerts that do not flap: every rule kind, with the demo's short windows, evaluated every 5 s of an injected clock
 * over ten minutes of steady traffic sent over OTLP to a real collector (real SQLite store). Each alert makes
 * exactly one transition to firing, and none resolves while its cause persists: the windows are whole elapsed
 * minutes, so the minute under way never counts as a whole one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlertTransition } from '../../../collector/model/alerts.js';
import { type TestCollector, tempDir } from '../helpers/collector.js';
import { alertingCollector, send } from './helpers.js';

const A = 'com.example/a';
const B = 'com.example/b';
const REPLAY = 'com.example/replay';
const NEW = 'com.example/new';
const SECOND = 1000;
const MINUTE = 60 * SECOND;
/** Three seconds into a minute: the first evaluations see a minute that has barely begun. */
const T0 = Date.UTC(2026, 5, 1, 12, 0, 3);
const TICK = 5 * SECOND;
const RUN = 10 * MINUTE;

const RULES = `interval: 5s
rules:
  - { name: skew, kind: advertisement_skew, for: 15s }
  - { name: required, kind: missing_capability, for: 15s, window: 1m, ratePerMinute: 1 }
  - { name: regression, kind: client_regression, minRequests: 5 }
  - { name: stale, kind: stale_instance, after: 1m, minUptime: 0s }
  - { name: drop, kind: negotiation_drop, for: 15s, window: 2m, baseline: 1h, drop: 20, minRequests: 10, scope: { services: [drop] } }
  - { name: withdrawn, kind: extension_withdrawn, lookback: 1h, level: instance }
  - { name: new-ids, kind: new_extension_id, window: 1h, lookback: 1d }
`;

describe('alert steadiness over ten minutes of steady traffic', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;
  let clock: { now: number };
  const transitions: AlertTransition[] = [];

  beforeAll(async () => {
    temp = await tempDir();
    ({ collector, clock } = await alertingCollector(temp.dir, RULES, T0 - 2 * 3_600_000));
    const url = collector.url;
    // History. An hour of the `drop` service negotiating A on every request, then (from two minutes before the run)
    // on one in five; alpha 1.0.0 declaring A; an instance that reported for half an hour and fell silent; an
    // instance advertising A and B; traffic on `shop` with no new id, two hours back.
    await send(url, { service: 'shop', instance: 'shop-a', atMs: T0 - 2 * 3_600_000, requests: [{ client: 'nova', version: '1.0.0', count: 3 }] });
    for (let atMs = T0 - 62 * MINUTE; atMs < T0 - 2 * MINUTE; atMs += MINUTE) {
      clock.now = atMs;
      await send(url, {
        service: 'drop',
        instance: 'drop-1',
        atMs,
        requests: [{ count: 20 }],
        extensions: [{ id: A, count: 20, clientDeclared: true, serverDeclared: true }],
      });
    }
    clock.now = T0 - 30 * MINUTE;
    await send(url, {
      service: 'shop',
      instance: 'shop-a',
      atMs: T0 - 30 * MINUTE,
      requests: [{ client: 'alpha', version: '1.0.0', count: 10 }],
      extensions: [{ id: A, client: 'alpha', version: '1.0.0', count: 10, clientDeclared: true, serverDeclared: true }],
    });
    await send(url, { service: 'old', instance: 'gone', atMs: T0 - 30 * MINUTE, requests: [{ count: 1 }] });
    clock.now = T0 - 5 * MINUTE;
    await send(url, { service: 'w', instance: 'w-1', atMs: T0 - 5 * MINUTE, advertised: [{ id: A }, { id: B }] });
    clock.now = T0 - 2 * MINUTE;
    await send(url, { service: 'old', instance: 'gone', atMs: T0 - 2 * MINUTE, requests: [{ count: 1 }] });

    // Ten minutes of steady traffic, an evaluation every 5 s.
    for (let now = T0 - 2 * MINUTE + TICK; now <= T0 + RUN; now += TICK) {
      clock.now = now;
      await send(url, {
        service: 'drop',
        instance: 'drop-1',
        atMs: now,
        requests: [{ count: 5 }],
        extensions: [{ id: A, count: 1, clientDeclared: true, serverDeclared: true }],
      });
      if (now < T0) continue;
      await send(url, {
        service: 'shop',
        instance: 'shop-a',
        atMs: now,
        // alpha 2.0.0 no longer declares A; ledger is refused with -32021 naming replay; nova declares a new id.
        requests: [
          { client: 'alpha', version: '2.0.0', count: 1 },
          { client: 'ledger', version: '1.0.0', count: 1, outcome: 'error', statusCode: '-32021' },
          { client: 'nova', version: '1.0.0', count: 1 },
        ],
        extensions: [
          { id: REPLAY, client: 'ledger', version: '1.0.0', count: 1, clientDeclared: false, serverDeclared: true, required: true },
          { id: NEW, client: 'nova', version: '1.0.0', count: 1, clientDeclared: true, serverDeclared: false },
        ],
        advertised: [{ id: A }, { id: B }],
      });
      await send(url, { service: 'shop', instance: 'shop-b', atMs: now, advertised: [{ id: A }] });
      await send(url, { service: 'w', instance: 'w-1', atMs: now, advertised: [{ id: A }] });
      transitions.push(...(await collector.alerting.evaluate()).transitions);
    }
  }, 600_000);
  afterAll(async () => {
    await collector?.close();
    await temp?.cleanup();
  });

  it('every rule kind fires, each alert exactly once, and none resolves while its cause persists', () => {
    const byAlert = new Map<string, string[]>();
    for (const transition of transitions) {
      const { alertname: _name, severity: _severity, ...labels } = transition.alert.labels;
      const key = `${transition.alert.rule} ${JSON.stringify(labels)}`;
      byAlert.set(key, [...(byAlert.get(key) ?? []), `${transition.from}>${transition.to}`]);
    }
    expect([...new Set([...byAlert.keys()].map((key) => key.split(' ')[0]))].sort()).toEqual([
      'drop',
      'new-ids',
      'regression',
      'required',
      'skew',
      'stale',
      'withdrawn',
    ]);
    for (const [key, moves] of byAlert) {
      expect(
        moves.filter((move) => move.endsWith('>firing')),
        key,
      ).toHaveLength(1);
      expect(
        moves.filter((move) => move.endsWith('>resolved')),
        key,
      ).toEqual([]);
    }
  });
});
