/**
 * The demo's alerts do not flap: the rules of `npm run demo` (demo/rules.yml, read from the repository) evaluated
 * every 5 s of an injected clock over thirty minutes of the demo fleet's traffic, sent over OTLP to a real
 * collector (real SQLite store) as its agents send it: every 2 s per server instance, cumulative totals since the
 * server started, each client calling at its own jittered pace (demo/fleet.mjs), acme-desktop 1.5.0 rolling out
 * 20 s in. The drift alerts fire within three minutes; then every alert makes exactly one transition to firing
 * and none resolves while its cause persists.
 *
 * The same property in real time, with the demo's real processes delivering to a real Alertmanager, is
 * test/demo/alert-steadiness.test.ts (a shorter run: this file holds the long one).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AlertTransition } from '../../../collector/model/alerts.js';
import { ROOT } from '../../support/processes.js';
import { type TestCollector, getJson, tempDir } from '../helpers/collector.js';
import { CUMULATIVE, type Json, advertisedPoint, extensionPoint, metricsRequest, msToNs, postMetrics, requestPoint } from '../helpers/otlp.js';
import { alertingCollector } from './helpers.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const SEARCH = 'com.example/search';
const REPLAY = 'com.example/replay';
const SECOND = 1000;
const MINUTE = 60 * SECOND;
/** Three seconds into a minute, as a demo started at any moment may be. */
const T0 = Date.UTC(2026, 5, 1, 12, 0, 3);
const RUN = 30 * MINUTE;
/** The demo's `OTEL_METRIC_EXPORT_INTERVAL` and its rules' `interval`. */
const EXPORT_EVERY = 2 * SECOND;
const EVALUATE_EVERY = 5 * SECOND;
/** The demo's drift alerts (as test/demo/alert-steadiness.test.ts expects them): each has a cause that persists. */
const EXPECTED = ['advertisement_skew', 'client_regression', 'missing_capability'];

/** The demo's servers (scripts/demo.mjs) and what each advertises. */
const SERVERS: Record<string, { service: string; advertises: Record<string, string> }> = {
  'shop-a': { service: 'shop', advertises: { [TASKS]: 'fp-tasks', [SEARCH]: 'fp-search-fast' } },
  'shop-b': { service: 'shop', advertises: { [TASKS]: 'fp-tasks' } },
  'docs-legacy': { service: 'docs', advertises: { [SEARCH]: 'fp-search-full' } },
  'docs-cjs': { service: 'docs', advertises: { [SEARCH]: 'fp-search-full' } },
};

/** The demo's clients (demo/fleet.mjs): who calls which server how often, declaring what. */
interface DemoClient {
  name?: string;
  version?: string;
  server: keyof typeof SERVERS;
  everyMs: number;
  startAfterMs?: number;
  /** Undefined: a 2025-era client over stateless HTTP, whose declaration the server never sees. */
  declares?: string[];
  /** Also calls `com.example/replayable`, refused with -32021 naming com.example/replay. */
  replayable?: boolean;
}
const CLIENTS: DemoClient[] = [
  { name: 'acme-desktop', version: '1.4.0', server: 'shop-a', everyMs: 1200, declares: [TASKS, SEARCH] },
  { name: 'acme-desktop', version: '1.4.0', server: 'shop-b', everyMs: 1500, declares: [TASKS, SEARCH] },
  { name: 'acme-desktop', version: '1.5.0', server: 'shop-a', everyMs: 1000, startAfterMs: 20 * SECOND, declares: [TASKS] },
  { name: 'orbit-cli', version: '0.9.2', server: 'shop-a', everyMs: 1800, declares: [SEARCH] },
  { name: 'orbit-cli', version: '0.9.2', server: 'docs-legacy', everyMs: 2000, declares: [SEARCH] },
  { name: 'notes-app', version: '3.0.0', server: 'docs-cjs', everyMs: 1600, declares: [] },
  { name: 'notes-app', version: '2.7.1', server: 'docs-cjs', everyMs: 2200 },
  { name: 'ledger-bot', version: '0.4.0', server: 'shop-b', everyMs: 1700, declares: [TASKS], replayable: true },
  // The hand-written client that sends no client info.
  { server: 'shop-a', everyMs: 2500, declares: [TASKS] },
];

/** A fixed sequence of pseudo-random numbers in [0, 1): the run is the same every time. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
}

type Point =
  | { kind: 'request'; spec: Omit<Parameters<typeof requestPoint>[0], 'count' | 'startNs' | 'timeNs'> }
  | { kind: 'extension'; spec: Omit<Parameters<typeof extensionPoint>[0], 'count' | 'startNs' | 'timeNs'> };

/** One server process's cumulative totals, by stream, since it started (as its agent's SDK keeps them). */
class ServerTotals {
  private readonly totals = new Map<string, { point: Point; total: number }>();
  add(point: Point): void {
    const key = JSON.stringify(point);
    const entry = this.totals.get(key) ?? { point, total: 0 };
    entry.total++;
    this.totals.set(key, entry);
  }
  /** An export at `nowMs`: every stream seen so far with its total. */
  export(server: string, startMs: number, nowMs: number): Json {
    const startNs = msToNs(startMs);
    const timeNs = msToNs(nowMs);
    const entries = [...this.totals.values()];
    const { service, advertises } = SERVERS[server]!;
    return metricsRequest({
      resource: { service, instance: server },
      temporality: CUMULATIVE,
      requests: entries
        .filter(({ point }) => point.kind === 'request')
        .map(({ point, total }) => requestPoint({ ...point.spec, count: total, startNs, timeNs })),
      extensions: entries.flatMap(({ point, total }) => (point.kind === 'extension' ? [extensionPoint({ ...point.spec, count: total, startNs, timeNs })] : [])),
      advertised: Object.entries(advertises).map(([id, fingerprint]) => advertisedPoint({ id, fingerprint, timeNs })),
    });
  }
}

/** What one call of `client` adds to its server's totals (as the agent records it). */
function call(client: DemoClient, totals: ServerTotals, method = 'tools/call', refused = false): void {
  const advertised = Object.keys(SERVERS[client.server]!.advertises);
  const who = { ...(client.name === undefined ? {} : { client: client.name }), ...(client.version === undefined ? {} : { version: client.version }) };
  const declaration = client.declares === undefined ? 'unknown' : client.declares.length === 0 ? 'none' : 'declared';
  const outcome = refused ? { outcome: 'error', extra: [{ key: 'rpc.response.status_code', value: { stringValue: '-32021' } }] } : {};
  totals.add({ kind: 'request', spec: { ...who, method, declaration, serverDeclaration: 'declared', ...outcome } });
  const ids = new Set([...(client.declares ?? []), ...advertised, ...(refused ? [REPLAY] : [])]);
  for (const id of ids) {
    const clientDeclared = client.declares?.includes(id) ?? false;
    totals.add({
      kind: 'extension',
      spec: {
        ...who,
        method,
        declaration,
        serverDeclaration: 'declared',
        ...outcome,
        id,
        clientDeclared,
        serverDeclared: advertised.includes(id),
        required: refused && id === REPLAY,
      },
    });
  }
}

describe('the demo’s alerts over thirty minutes of its fleet’s traffic, on an injected clock', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;
  const transitions: AlertTransition[] = [];
  /** When each expected rule first had a firing alert. */
  const firstFiring = new Map<string, number>();
  let evaluations = 0;

  beforeAll(async () => {
    temp = await tempDir();
    const rules = await readFile(join(ROOT, 'demo', 'rules.yml'), 'utf8');
    const started = await alertingCollector(temp.dir, rules, T0);
    collector = started.collector;
    const { clock } = started;
    const next = random(42);
    const jitter = (ms: number): number => ms * (0.7 + next() * 0.6);
    const totals = new Map(Object.keys(SERVERS).map((server) => [server, new ServerTotals()]));
    // Each client's next call; each server's next export (the four agents out of step with one another).
    const calls = CLIENTS.map((client) => ({ client, atMs: T0 + (client.startAfterMs ?? 0) + jitter(client.everyMs) }));
    const exports = Object.keys(SERVERS).map((server, index) => ({ server, atMs: T0 + EXPORT_EVERY + index * 450 }));
    let evaluateAt = T0 + EVALUATE_EVERY;

    while (evaluateAt <= T0 + RUN) {
      const nextExport = Math.min(...exports.map((entry) => entry.atMs));
      const now = Math.min(nextExport, evaluateAt);
      for (const entry of calls) {
        while (entry.atMs <= now) {
          const serverTotals = totals.get(entry.client.server)!;
          call(entry.client, serverTotals);
          if (entry.client.replayable === true) call(entry.client, serverTotals, 'com.example/replayable', true);
          entry.atMs += jitter(entry.client.everyMs);
        }
      }
      clock.now = now;
      for (const entry of exports.filter((candidate) => candidate.atMs === now)) {
        const response = await postMetrics(collector.url, totals.get(entry.server)!.export(entry.server, T0 - 3 * SECOND, now));
        expect(response.status, await response.text()).toBe(200);
        entry.atMs += EXPORT_EVERY;
      }
      if (now === evaluateAt) {
        const cycle = await collector.alerting.evaluate();
        evaluations++;
        transitions.push(...cycle.transitions);
        for (const alert of cycle.firing) if (alert.state === 'firing' && !firstFiring.has(alert.rule)) firstFiring.set(alert.rule, now - T0);
        evaluateAt += EVALUATE_EVERY;
      }
    }
  }, 600_000);
  afterAll(async () => {
    await collector?.close();
    await temp?.cleanup();
  });

  it('evaluates every 5 s of the thirty minutes', () => {
    expect(evaluations).toBe(RUN / EVALUATE_EVERY);
  });

  it('the demo’s drift alerts fire within three minutes', () => {
    for (const rule of EXPECTED) expect(firstFiring.get(rule), rule).toBeLessThanOrEqual(3 * MINUTE);
  });

  it('every alert makes exactly one transition to firing, none resolves, and each is firing at the end', async () => {
    const byAlert = new Map<string, string[]>();
    for (const transition of transitions) {
      const { alertname: _name, severity: _severity, ...labels } = transition.alert.labels;
      const key = `${transition.alert.rule} ${JSON.stringify(labels)}`;
      byAlert.set(key, [...(byAlert.get(key) ?? []), `${transition.from}>${transition.to}`]);
    }
    expect([...new Set([...byAlert.keys()].map((key) => key.split(' ')[0]))]).toEqual(expect.arrayContaining(EXPECTED));
    for (const [key, moves] of byAlert) {
      expect(
        moves.filter((move) => move.endsWith('>firing')),
        `${key}: ${moves.join(' ')}`,
      ).toHaveLength(1);
      expect(
        moves.filter((move) => move.endsWith('>resolved')),
        key,
      ).toEqual([]);
    }
    // The collector's own record agrees: each alert it holds is firing, with one transition to firing.
    const { body } = await getJson<{ alerts: { rule: string; state: string; transitions: { to: string }[] }[] }>(`${collector.url}/api/v1/alerts?limit=500`);
    expect(body.alerts.length).toBeGreaterThanOrEqual(EXPECTED.length);
    for (const alert of body.alerts) {
      expect(alert.state, alert.rule).toBe('firing');
      expect(
        alert.transitions.filter((move) => move.to === 'firing'),
        alert.rule,
      ).toHaveLength(1);
    }
  });
});
