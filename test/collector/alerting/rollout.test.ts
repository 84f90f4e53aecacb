/**
 * A rolling deploy under real instrumented MCP servers (`node --import @extscope/agent/register`, the v2 SDK over
 * stdio) exporting to a real collector whose clock the test moves: two instances of one service; one restarts
 * advertising an extra extension (skew pending, firing once `for` has passed), then the other is updated too
 * (resolved). The alert's history is in the database, the API and /metrics.
 */
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EvaluationCycle } from '../../../collector/model/alerts.js';
import { type TestCollector, getJson, tempDir } from '../helpers/collector.js';
import { ROOT, agentEnv, fixture, nodeArgs } from '../../support/processes.js';
import { active, alertingCollector, alerts } from './helpers.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const SEARCH = 'com.example/search';
const MINUTE = 60_000;

interface InstanceJson {
  instanceId: string | null;
  lastSeen: string;
  advertises: { id: string }[];
}

describe('alerting through a rolling deploy of real MCP servers', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;
  let clock: { now: number };
  const clients = new Map<string, Client>();

  beforeAll(async () => {
    temp = await tempDir();
    ({ collector, clock } = await alertingCollector(
      temp.dir,
      'rules:\n  - { name: skew, kind: advertisement_skew, for: 10m, labels: { team: mcp } }\n',
      Date.now(),
    ));
  });
  afterAll(async () => {
    await Promise.all([...clients.values()].map((client) => client.close().catch(() => undefined)));
    await collector?.close();
    await temp?.cleanup();
  });

  /** (Re)starts instance `id` of service `api` advertising `extensions`, and sends it one request. */
  async function deploy(id: string, extensions: Record<string, unknown>): Promise<void> {
    await clients.get(id)?.close();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: nodeArgs(fixture('dashboard-stdio.mjs'), true),
      cwd: ROOT,
      env: agentEnv(collector.url, {
        OTEL_SERVICE_NAME: 'api',
        OTEL_RESOURCE_ATTRIBUTES: `service.instance.id=${id}`,
        FIXTURE_EXTENSIONS: JSON.stringify(extensions),
      }),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'deployer', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(transport);
    await client.callTool({ name: 'echo', arguments: { text: id } });
    clients.set(id, client);
  }

  async function instances(): Promise<Map<string, InstanceJson>> {
    const { body } = await getJson<{ instances: InstanceJson[] }>(`${collector.url}/api/v1/instances?service=api`);
    return new Map(body.instances.map((instance) => [instance.instanceId ?? '', instance]));
  }

  /** Waits until both instances have reported since the clock was last moved, advertising what is expected. */
  async function reported(expected: Record<string, string[]>): Promise<void> {
    const since = new Date(clock.now).toISOString();
    await expect
      .poll(
        async () => {
          const seen = await instances();
          return Object.fromEntries(
            Object.keys(expected).map((id) => {
              const instance = seen.get(id);
              return [id, instance !== undefined && instance.lastSeen >= since ? instance.advertises.map((entry) => entry.id).sort() : 'not since'];
            }),
          );
        },
        { timeout: 30_000, interval: 200 },
      )
      .toEqual(expected);
  }

  const skewStates = (cycle: EvaluationCycle): string[] => cycle.transitions.map((t) => `${t.alert.rule} ${t.from}>${t.to} ${t.alert.labels['service']}`);

  it('skew goes pending when one instance restarts with an extra extension, fires after `for`, resolves once the other is updated', async () => {
    await deploy('api-a', { [TASKS]: {} });
    await deploy('api-b', { [TASKS]: {} });
    await reported({ 'api-a': [TASKS], 'api-b': [TASKS] });
    expect(skewStates(await collector.alerting.evaluate())).toEqual([]);

    // api-a restarts with the new release: it advertises search as well.
    await deploy('api-a', { [TASKS]: {}, [SEARCH]: { mode: 'fast' } });
    await reported({ 'api-a': [SEARCH, TASKS].sort(), 'api-b': [TASKS] });
    const pendingAt = clock.now;
    expect(skewStates(await collector.alerting.evaluate())).toEqual(['skew inactive>pending api']);
    expect(await active(collector.url)).toEqual(['skew pending {"service":"api","team":"mcp"}']);

    // Nine minutes on (both instances still reporting): still pending.
    clock.now = pendingAt + 9 * MINUTE;
    await reported({ 'api-a': [SEARCH, TASKS].sort(), 'api-b': [TASKS] });
    expect(skewStates(await collector.alerting.evaluate())).toEqual([]);
    expect(await active(collector.url)).toEqual(['skew pending {"service":"api","team":"mcp"}']);

    // Past `for` (10 minutes): firing, and on /metrics.
    clock.now = pendingAt + 10 * MINUTE;
    await reported({ 'api-a': [SEARCH, TASKS].sort(), 'api-b': [TASKS] });
    const firing = await collector.alerting.evaluate();
    expect(skewStates(firing)).toEqual(['skew pending>firing api']);
    expect(firing.firing.map((alert) => alert.labels)).toEqual([{ service: 'api', team: 'mcp', alertname: 'skew', severity: 'warning' }]);
    const exposition = await (await fetch(`${collector.url}/metrics`)).text();
    expect(exposition).toMatch(
      /^extscope_alerts\{[^}]*alertname="skew",alertstate="firing",kind="advertisement_skew",rule="skew",service="api",severity="warning",team="mcp"\} 1$/m,
    );
    expect(exposition).toMatch(/^extscope_alert_evaluation_duration_seconds_count [1-9]\d*$/m);

    // The rest of the fleet is updated: api-b advertises search too.
    clock.now = pendingAt + 12 * MINUTE;
    await deploy('api-b', { [TASKS]: {}, [SEARCH]: { mode: 'fast' } });
    await reported({ 'api-a': [SEARCH, TASKS].sort(), 'api-b': [SEARCH, TASKS].sort() });
    expect(skewStates(await collector.alerting.evaluate())).toEqual(['skew firing>resolved api']);
    expect(await active(collector.url)).toEqual([]);
    expect(await (await fetch(`${collector.url}/metrics`)).text()).not.toMatch(/^extscope_alerts\{.*alertname="skew"/m);

    // The whole history, from the database.
    const [stored] = (await alerts(collector.url, '?rule=skew')).alerts;
    expect(stored).toMatchObject({
      state: 'resolved',
      activeSince: new Date(pendingAt).toISOString(),
      firingSince: new Date(pendingAt + 10 * MINUTE).toISOString(),
      resolvedAt: new Date(pendingAt + 12 * MINUTE).toISOString(),
      dashboardPath: '/?view=fleet&service=api',
    });
    expect(stored?.transitions.map((t) => `${t.from}>${t.to}`)).toEqual(['inactive>pending', 'pending>firing', 'firing>resolved']);
  });
});
