/**
 * The Grafana dashboard in deploy/grafana: no Grafana runs here, so every PromQL query in its JSON is run against a
 * real Prometheus (Debian's) scraping the built collector with the shipped scrape configuration, fed by real MCP
 * SDK clients calling real servers run with the agent; the numbers must be the query API's. The JSON's structure
 * and the provisioning files it relies on are checked too.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { z } from 'zod';
import { type ChildCollector, spawnCollector, tempDir } from '../collector/helpers/collector.js';
import { type Daemon, requireBinary, startDaemon } from '../support/daemon.js';
import { ROOT, agentEnv, nodeArgs } from '../support/processes.js';
import { type DashboardPanel, type DashboardTarget, dashboardQueries, readDashboard } from '../support/grafana-dashboard.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const SEARCH = 'com.example/search';
const READ_TOKEN = 'grafana-test-read-token-0123456789abcdef';
/** What the dashboard's template variables become: every service and client, a rate window of a minute. */
const VARIABLES = { service: '.*', client: '.*', __rate_interval: '1m' };

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

interface MatrixCell {
  id: string;
  clientDeclared: number;
  serverAdvertised: number;
  negotiated: number;
  required: number;
  negotiatedShare: number | null;
}

interface MatrixRow {
  client: string;
  name: string | null;
  version: string | null;
  requests: number;
  serverUnknown: number;
  extensions: MatrixCell[];
}

interface Instance {
  service: string | null;
  instanceId: string | null;
  stale: boolean;
  advertisedAt: string | null;
  advertises: { id: string }[];
}

interface AlertRecord {
  rule: string;
  state: string;
  severity: string;
  labels: Record<string, string>;
}

const dashboard = readDashboard();
const byTitle = (start: string): DashboardPanel => {
  const panel = dashboard.panels.find((each) => each.title.startsWith(start));
  if (panel === undefined) throw new Error(`no panel titled "${start}…"`);
  return panel;
};
const expr = (panel: DashboardPanel, refId = 'A'): string => {
  const target = panel.targets.find((each: DashboardTarget) => each.refId === refId);
  if (target === undefined) throw new Error(`panel ${panel.id} has no target ${refId}`);
  return dashboardQueries.substitute(target.expr, VARIABLES);
};

describe('the Grafana dashboard against a real Prometheus scraping the collector', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: ChildCollector;
  let prometheus: Daemon;
  const servers: ChildProcessWithoutNullStreams[] = [];

  const api = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${collector.url}${path}`, { headers: { authorization: `Bearer ${READ_TOKEN}` } });
    expect(response.status, path).toBe(200);
    return (await response.json()) as T;
  };
  const query = async (expression: string): Promise<Sample[]> => {
    const response = await fetch(`${prometheus.url}/api/v1/query?query=${encodeURIComponent(expression)}`);
    const body = (await response.json()) as { status: string; error?: string; data: { resultType: string; result: Sample[] } };
    if (body.status !== 'success') throw new Error(`prometheus refused ${expression}: ${body.error ?? response.status}`);
    expect(body.data.resultType).toBe('vector');
    return body.data.result;
  };
  /** Both sides once they agree (Prometheus scrapes every second): the last pair is compared either way, so a difference shows. */
  const agree = async <T>(prometheusSide: () => Promise<T>, apiSide: () => Promise<T>): Promise<T> => {
    let pair: [T, T] = [await prometheusSide(), await apiSide()];
    for (let attempt = 0; attempt < 30 && JSON.stringify(pair[0]) !== JSON.stringify(pair[1]); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      pair = [await prometheusSide(), await apiSide()];
    }
    expect(pair[0]).toEqual(pair[1]);
    return pair[1];
  };
  /** Samples as `label=value,… → number`, sorted, for comparison with what the API says. */
  const table = (samples: Sample[], labels: string[]): string[] =>
    samples.map((sample) => `${labels.map((name) => sample.metric[name] ?? '').join(' ')} → ${Number(sample.value[1])}`).sort();

  const startServer = async (instance: string, extensions?: Record<string, object>): Promise<URL> => {
    const env = agentEnv(collector.url, {
      OTEL_SERVICE_NAME: 'shop',
      OTEL_RESOURCE_ATTRIBUTES: `service.instance.id=${instance}`,
      EXTSCOPE_SPANS: 'false',
      ...(extensions === undefined ? {} : { DEMO_EXTENSIONS: JSON.stringify(extensions) }),
    });
    const child = spawn(process.execPath, nodeArgs(join(ROOT, 'demo', 'servers', 'shop.mjs'), true), { cwd: ROOT, env });
    servers.push(child);
    const [line] = (await once(child.stdout, 'data')) as [Buffer];
    return new URL(`http://127.0.0.1:${(JSON.parse(line.toString('utf8')) as { port: number }).port}/mcp`);
  };

  /** The four clients, open until the first test has seen every panel's data. */
  let clients: Record<'alphaA' | 'alphaB' | 'beta' | 'ledger', Client> | undefined;
  /** How many -32021 answers ledger received: one per round. */
  let refusals = 0;
  /** One round of traffic: alpha searches on both instances, beta on shop-a, ledger is refused once. */
  const round = async (): Promise<void> => {
    if (clients === undefined) throw new Error('the clients are closed');
    await clients.alphaA.callTool({ name: 'search', arguments: { query: 'lamps' } });
    await clients.alphaB.callTool({ name: 'search', arguments: { query: 'lamps' } });
    await clients.beta.callTool({ name: 'search', arguments: { query: 'desks' } });
    await clients.ledger.request({ method: 'com.example/replayable', params: {} }, z.any()).then(
      () => expect.fail('com.example/replayable answered without -32021'),
      (error: { code?: number }) => expect(error.code).toBe(-32021),
    );
    refusals++;
  };

  const connect = async (name: string, version: string, extensions: Record<string, Record<string, never>>, url: URL): Promise<Client> => {
    const client = new Client({ name, version }, { capabilities: { extensions }, versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(url));
    return client;
  };

  beforeAll(async () => {
    temp = await tempDir();
    const rules = join(temp.dir, 'rules.yml');
    await writeFile(rules, stringify({ interval: '1s', rules: [{ name: 'advertisement_skew', kind: 'advertisement_skew', for: '1s', severity: 'warning' }] }));
    collector = await spawnCollector(join(temp.dir, 'extscope.db'), ['--rules', rules], { EXTSCOPE_READ_TOKEN: READ_TOKEN });

    // The shipped scrape configuration, pointed at this collector, scraping every second, the token in a file of its own.
    const shipped = parse(readFileSync(join(ROOT, 'deploy', 'prometheus', 'prometheus.yml'), 'utf8')) as {
      global: Record<string, string>;
      scrape_configs: { authorization: { credentials_file: string }; static_configs: { targets: string[] }[] }[];
    };
    prometheus = await startDaemon({
      name: 'prometheus',
      binary: requireBinary('/usr/bin/prometheus', 'prometheus'),
      readyPath: '/-/ready',
      async prepare(dir, port) {
        const config = structuredClone(shipped);
        config.global = { ...config.global, scrape_interval: '1s', scrape_timeout: '1s' };
        const [job] = config.scrape_configs;
        if (job === undefined) throw new Error('deploy/prometheus/prometheus.yml has no scrape job');
        job.authorization.credentials_file = join(dir, 'read-token');
        job.static_configs = [{ targets: [new URL(collector.url).host] }];
        await writeFile(join(dir, 'read-token'), READ_TOKEN);
        await writeFile(join(dir, 'prometheus.yml'), stringify(config));
        return [
          `--config.file=${join(dir, 'prometheus.yml')}`,
          `--storage.tsdb.path=${join(dir, 'data')}`,
          `--web.listen-address=127.0.0.1:${port}`,
          '--log.level=warn',
        ];
      },
    });

    // Service shop: shop-a advertises tasks and search, shop-b only tasks (fleet skew).
    const shopA = await startServer('shop-a');
    const shopB = await startServer('shop-b', { [TASKS]: {} });
    // alpha declares both and calls both instances; beta declares tasks only; ledger declares nothing and is
    // answered -32021 by a method that requires com.example/replay.
    clients = {
      alphaA: await connect('alpha', '1.0.0', { [TASKS]: {}, [SEARCH]: {} }, shopA),
      alphaB: await connect('alpha', '1.0.0', { [TASKS]: {}, [SEARCH]: {} }, shopB),
      beta: await connect('beta', '2.0.0', { [TASKS]: {} }, shopA),
      ledger: await connect('ledger', '0.9.0', {}, shopB),
    };
    // Rounds over a few scrapes, so that the rate panels see the counters grow; the first test adds more.
    for (let each = 0; each < 3; each++) {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await round();
    }
    await clients.alphaB.callTool({ name: 'checkout', arguments: {} });
  }, 120_000);

  afterAll(async () => {
    for (const client of Object.values(clients ?? {})) await client.close().catch(() => undefined);
    for (const server of servers) if (server.exitCode === null) server.kill('SIGTERM');
    await Promise.all(servers.map((server) => (server.exitCode === null ? once(server, 'exit') : undefined)));
    await prometheus?.stop();
    collector?.child.kill('SIGTERM');
    await collector?.exited;
    await temp?.cleanup();
  });

  it('every query in the dashboard runs and returns finite, non-negative data, some of it above zero', async () => {
    for (const { panel, target, expression } of dashboardQueries.all(dashboard, VARIABLES)) {
      const values = async (): Promise<number[]> => (await query(expression)).map((sample) => Number(sample.value[1]));
      // Data, and some of it above zero (every panel here has something to show). Traffic goes on while it is
      // awaited, a round per look, so a rate sees its counters grow however the exports and scrapes fall.
      const withTraffic = async (): Promise<boolean> => {
        await round();
        return (await values()).some((value) => value > 0);
      };
      await expect.poll(withTraffic, { timeout: 60_000, interval: 1000, message: `panel ${panel.id} ${target.refId}: ${expression}` }).toBe(true);
      expect(
        (await values()).filter((value) => !(Number.isFinite(value) && value >= 0)),
        `panel ${panel.id} ${target.refId}: ${expression}`,
      ).toEqual([]);
    }
    // The template variables' label_values() queries, as Grafana runs them: Prometheus' label values API.
    const services = (await (await fetch(`${prometheus.url}/api/v1/label/service/values?match[]=extscope_requests_total`)).json()) as { data: string[] };
    expect(services.data).toEqual(['shop']);
    const clientNames = (await (
      await fetch(`${prometheus.url}/api/v1/label/client/values?match[]=${encodeURIComponent('extscope_requests_total{service=~".*"}')}`)
    ).json()) as { data: string[] };
    expect(clientNames.data).toEqual(['alpha', 'beta', 'ledger']);
    for (const client of Object.values(clients ?? {})) await client.close();
    clients = undefined;
  });

  it('the share per extension, the client × extension matrix and the -32021 answers are the query API’s numbers', async () => {
    // Both sides settle once the servers have stopped (each flushes its counts on SIGTERM).
    for (const server of servers) server.kill('SIGTERM');
    await Promise.all(servers.map((server) => (server.exitCode === null ? once(server, 'exit') : undefined)));

    const fromApi = async () => {
      const rows = (await api<{ rows: MatrixRow[] }>('/api/v1/matrix?group=client&from=2020-01-01T00:00:00Z')).rows;
      const versions = (await api<{ rows: MatrixRow[] }>('/api/v1/matrix?group=client_version&from=2020-01-01T00:00:00Z')).rows;
      const known = rows.reduce((sum, row) => sum + row.requests - row.serverUnknown, 0);
      const ids = [...new Set(rows.flatMap((row) => row.extensions.map((cell) => cell.id)))];
      return {
        perExtension: ids
          .map((id) => `${id} → ${rows.reduce((sum, row) => sum + (row.extensions.find((cell) => cell.id === id)?.negotiated ?? 0), 0) / known}`)
          .sort(),
        // The API lists every id in every row; Prometheus has a series where some request of the client mentioned the id.
        matrix: rows
          .flatMap((row) =>
            row.extensions
              .filter((cell) => cell.clientDeclared + cell.serverAdvertised + cell.required > 0)
              .map((cell) => `${row.name ?? ''} ${cell.id} → ${cell.negotiatedShare}`),
          )
          .sort(),
        missing: versions
          .flatMap((row) =>
            row.extensions.filter((cell) => cell.required > 0).map((cell) => `${row.name ?? ''} ${row.version ?? ''} ${cell.id} → ${cell.required}`),
          )
          .sort(),
        requests: rows.reduce((sum, row) => sum + row.requests, 0),
      };
    };
    const fromPrometheus = async () => ({
      perExtension: table(await query(expr(byTitle('Negotiated share per extension (since'))), ['extension']),
      matrix: table(await query(expr(byTitle('Client × extension'))), ['client', 'extension']),
      missing: table(await query(expr(byTitle('-32021 answers by client version'))), ['client', 'client_version', 'extension']),
      requests: (await query('sum(extscope_requests_total)')).map((sample) => Number(sample.value[1]))[0],
    });
    const settled = await agree(fromPrometheus, fromApi);
    // What the clients did: alpha negotiated both ids on shop-a and only tasks on shop-b; ledger was refused once a round.
    expect(settled.missing).toEqual([`ledger 0.9.0 com.example/replay → ${refusals}`]);
    expect(settled.matrix.filter((line) => line.startsWith('beta '))).toEqual([`beta ${SEARCH} → 0`, `beta ${TASKS} → 1`]);
    // At least the calls made, four a round and the checkout (each connection's version negotiation adds its own requests).
    expect(settled.requests).toBeGreaterThanOrEqual(4 * refusals + 1);
  });

  it('the fleet skew and the alert states are the query API’s', async () => {
    const fromApi = async () => {
      const instances = (await api<{ instances: Instance[] }>('/api/v1/instances?limit=100')).instances.filter(
        (instance) => !instance.stale && instance.advertisedAt !== null,
      );
      const rows: string[] = [];
      const skewed = new Map<string, number>();
      for (const service of new Set(instances.map((instance) => instance.service ?? ''))) {
        const members = instances.filter((instance) => (instance.service ?? '') === service);
        for (const id of new Set(members.flatMap((instance) => instance.advertises.map((entry) => entry.id)))) {
          const advertising = members.filter((instance) => instance.advertises.some((entry) => entry.id === id)).length;
          rows.push(`${service} ${id} → ${advertising}/${members.length - advertising}`);
          if (advertising < members.length) skewed.set(service, (skewed.get(service) ?? 0) + 1);
        }
      }
      const alerts = (await api<{ alerts: AlertRecord[] }>('/api/v1/alerts?state=active&limit=100')).alerts;
      const states = new Map<string, number>();
      for (const alert of alerts) {
        const key = `${alert.rule} ${alert.state} ${alert.severity} ${alert.labels['service'] ?? ''}`;
        states.set(key, (states.get(key) ?? 0) + 1);
      }
      return {
        fleet: rows.sort(),
        skewed: [...skewed].map(([service, count]) => `${service} → ${count}`).sort(),
        alerts: [...states].map(([key, count]) => `${key} → ${count}`).sort(),
      };
    };
    const fromPrometheus = async () => {
      const fleet = byTitle('Fleet skew');
      const advertising = new Map(
        (await query(expr(fleet, 'A'))).map((sample) => [`${sample.metric['service']} ${sample.metric['extension']}`, Number(sample.value[1])]),
      );
      const missing = new Map(
        (await query(expr(fleet, 'B'))).map((sample) => [`${sample.metric['service']} ${sample.metric['extension']}`, Number(sample.value[1])]),
      );
      return {
        fleet: [...advertising].map(([key, count]) => `${key} → ${count}/${missing.get(key)}`).sort(),
        skewed: table(await query(expr(byTitle('Extensions not advertised by every'))), ['service']),
        alerts: table(await query(expr(byTitle('Alerts pending or firing'))), ['alertname', 'alertstate', 'severity', 'service']),
      };
    };
    const settled = await agree(fromPrometheus, fromApi);
    expect(settled.fleet).toEqual([`shop ${SEARCH} → 1/1`, `shop ${TASKS} → 2/0`]);
    expect(settled.skewed).toEqual(['shop → 1']);
    expect(settled.alerts).toEqual(['advertisement_skew firing warning shop → 1']);
  });
});
