/**
 * The Grafana dashboard in deploy/grafana: no Grafana runs here, so every PromQL query in its JSON is run against a
 * real Prometheus (Debian's) scraping the built collector with the shipped scrape configuration, fed by real MCP
 * SDK clients calling real servers run with the agent. Each query is run as Grafana runs it for a time range:
 * `$__range` is the range, an instant query is evaluated at the range's end. Over two ranges, with the collector
 * restarted between them (inside the second), the figures must be the query API's for the same range. The JSON's
 * structure and the provisioning files it relies on are test/ops/grafana-provisioning.test.ts.
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
import { freePort } from '../support/counting-clients.js';
import { type Daemon, requireBinary, startDaemon } from '../support/daemon.js';
import { type DashboardPanel, type DashboardTarget, dashboardQueries, readDashboard } from '../support/grafana-dashboard.js';
import { ROOT, agentEnv, nodeArgs } from '../support/processes.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const SEARCH = 'com.example/search';
const READ_TOKEN = 'grafana-test-read-token-0123456789abcdef';
/** Every service, client, version and instance (the variables' All), as Grafana substitutes them. */
const ALL = { service: '.*', client: '.*', client_version: '.*', instance: '.*' };
const MINUTE_MS = 60_000;

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

interface MatrixAnswer {
  from: string;
  to: string;
  resolution: string;
  rows: MatrixRow[];
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

/** A time range as Grafana's time picker gives it, on scrape timestamps (ms). */
interface Range {
  startMs: number;
  endMs: number;
}

const dashboard = readDashboard();
const byTitle = (start: string): DashboardPanel => {
  const panel = dashboard.panels.find((each) => each.title.startsWith(start));
  if (panel === undefined) throw new Error(`no panel titled "${start}…"`);
  return panel;
};
const targetOf = (panel: DashboardPanel, refId = 'A'): DashboardTarget => {
  const target = panel.targets.find((each) => each.refId === refId);
  if (target === undefined) throw new Error(`panel ${panel.id} has no target ${refId}`);
  return target;
};
/**
 * A panel's query as Grafana sends it for the range: `$__range` is the range; `$__rate_interval` is the range too,
 * so that a rate panel's query gives the range's average rate (the figure to compare), unless a window is given.
 */
const exprFor = (panel: DashboardPanel, range: Range, refId = 'A', rateInterval?: string): string => {
  const window = `${range.endMs - range.startMs}ms`;
  return dashboardQueries.substitute(targetOf(panel, refId).expr, { ...ALL, __range: window, __rate_interval: rateInterval ?? window });
};
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const seconds = (ms: number): string => (ms / 1000).toFixed(3);

describe('the Grafana dashboard against a real Prometheus scraping the collector, over two time ranges and a restart', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let dbPath: string;
  let port: number;
  let collectorArgs: string[];
  let collector: ChildCollector;
  let prometheus: Daemon;
  const servers: ChildProcessWithoutNullStreams[] = [];

  const api = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${collector.url}${path}`, { headers: { authorization: `Bearer ${READ_TOKEN}` } });
    expect(response.status, path).toBe(200);
    return (await response.json()) as T;
  };
  const promApi = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${prometheus.url}${path}`);
    const body = (await response.json()) as { status: string; error?: string; data: T };
    if (body.status !== 'success') throw new Error(`prometheus refused ${decodeURIComponent(path)}: ${body.error ?? response.status}`);
    return body.data;
  };
  /** An instant query, at `atMs` (a scrape's timestamp) or now. */
  const query = async (expression: string, atMs?: number): Promise<Sample[]> => {
    const at = atMs === undefined ? '' : `&time=${seconds(atMs)}`;
    const data = await promApi<{ resultType: string; result: Sample[] }>(`/api/v1/query?query=${encodeURIComponent(expression)}${at}`);
    expect(data.resultType).toBe('vector');
    return data.result;
  };
  /** Samples as `label … → number`, sorted, for comparison with what the API says. */
  const table = (samples: Sample[], labels: string[]): string[] =>
    samples.map((sample) => `${labels.map((name) => sample.metric[name] ?? '').join(' ')} → ${Number(sample.value[1])}`).sort();
  /** The timestamps (ms) of the scrapes that reached the collector in the last minute, oldest first. */
  const scrapes = async (): Promise<number[]> => {
    const data = await promApi<{ result: { values: [number, string][] }[] }>(`/api/v1/query?query=${encodeURIComponent('up[1m]')}`);
    return (data.result[0]?.values ?? []).filter(([, up]) => up === '1').map(([at]) => Math.round(at * 1000));
  };
  /** The first successful scrape at or after `afterMs`. */
  const scrapeAfter = async (afterMs: number): Promise<number> => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const found = (await scrapes()).find((at) => at >= afterMs);
      if (found !== undefined) return found;
      await sleep(200);
    }
    throw new Error(`no successful scrape after ${new Date(afterMs).toISOString()}`);
  };

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

  let clients: Record<'alphaA' | 'alphaB' | 'beta' | 'ledger', Client> | undefined;
  /**
   * One round of traffic: alpha searches on both instances, beta on shop-a, ledger is refused (-32021) by shop-b.
   * Every round adds to the same label sets, so that after a restart each series the range counts goes on.
   */
  const round = async (): Promise<void> => {
    if (clients === undefined) throw new Error('the clients are closed');
    await clients.alphaA.callTool({ name: 'search', arguments: { query: 'lamps' } });
    await clients.alphaB.callTool({ name: 'search', arguments: { query: 'lamps' } });
    await clients.beta.callTool({ name: 'search', arguments: { query: 'desks' } });
    await clients.ledger.request({ method: 'com.example/replayable', params: {} }, z.any()).then(
      () => expect.fail('com.example/replayable answered without -32021'),
      (error: { code?: number }) => expect(error.code).toBe(-32021),
    );
  };

  const connect = async (name: string, version: string, extensions: Record<string, Record<string, never>>, url: URL): Promise<Client> => {
    const client = new Client({ name, version }, { capabilities: { extensions }, versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(url));
    return client;
  };

  /** The request counters' sums as /metrics has them now, and as Prometheus last scraped them. */
  const COUNTER_SUMS = ['extscope_requests_total', 'extscope_extension_requests_total', 'extscope_missing_capability_errors_total'];
  const exposedSums = async (): Promise<number[]> => {
    const text = await (await fetch(`${collector.url}/metrics`, { headers: { authorization: `Bearer ${READ_TOKEN}` } })).text();
    return COUNTER_SUMS.map((name) =>
      text
        .split('\n')
        .filter((line) => line.startsWith(`${name}{`))
        .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0),
    );
  };
  const scrapedSums = async (): Promise<number[]> =>
    Promise.all(COUNTER_SUMS.map(async (name) => Number((await query(`sum(${name})`))[0]?.value[1] ?? Number.NaN)));
  /**
   * Waits until the agents' exports of the traffic so far are applied (the counters still for a second) and
   * Prometheus has scraped the counters as they are: what a restart would otherwise take with it unscraped.
   */
  const settled = async (): Promise<void> => {
    let last = '';
    for (let attempt = 0; attempt < 60; attempt++) {
      await sleep(500);
      const [exposed, scraped] = [await exposedSums(), await scrapedSums()];
      const now = JSON.stringify(exposed);
      if (now === last && now === JSON.stringify(scraped)) return;
      last = now;
    }
    throw new Error('the collector’s counters did not settle, or Prometheus did not scrape them');
  };

  const startCollector = async (): Promise<ChildCollector> => spawnCollector(dbPath, collectorArgs, { EXTSCOPE_READ_TOKEN: READ_TOKEN });

  beforeAll(async () => {
    temp = await tempDir();
    dbPath = join(temp.dir, 'extscope.db');
    port = await freePort();
    const rules = join(temp.dir, 'rules.yml');
    await writeFile(rules, stringify({ interval: '1s', rules: [{ name: 'advertisement_skew', kind: 'advertisement_skew', for: '1s', severity: 'warning' }] }));
    // A fixed port, so that the restarted collector is the same scrape target and the agents' same endpoint.
    collectorArgs = ['--port', String(port), '--rules', rules];
    collector = await startCollector();

    // The shipped scrape configuration, pointed at this collector, scraping every second, the token in a file of its own.
    const shipped = parse(readFileSync(join(ROOT, 'deploy', 'prometheus', 'prometheus.yml'), 'utf8')) as {
      global: Record<string, string>;
      scrape_configs: { authorization: { credentials_file: string }; static_configs: { targets: string[] }[] }[];
    };
    prometheus = await startDaemon({
      name: 'prometheus',
      binary: requireBinary('/usr/bin/prometheus', 'prometheus'),
      readyPath: '/-/ready',
      async prepare(dir, daemonPort) {
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
          `--web.listen-address=127.0.0.1:${daemonPort}`,
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
    // Rounds over a few scrapes, so that every series exists before the ranges and the rate panels see them grow.
    for (let each = 0; each < 3; each++) {
      await sleep(1500);
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

  it('every query in the dashboard runs and returns finite, non-negative data, some of it above zero; the variables list what was sent', async () => {
    const lastMinute: Range = { startMs: Date.now() - MINUTE_MS, endMs: Date.now() };
    for (const panel of dashboard.panels) {
      for (const { refId } of panel.targets) {
        const expression = exprFor(panel, lastMinute, refId, '4s');
        const values = async (): Promise<number[]> => (await query(expression)).map((sample) => Number(sample.value[1]));
        // Data, and some of it above zero (every panel but the one counting left-out series has something to
        // show; that one must say 0). Traffic goes on while it is awaited, a round per look.
        const withTraffic = async (): Promise<boolean> => {
          await round();
          const now = await values();
          return panel.title.startsWith('Instance series left out') ? now.length === 1 && now[0] === 0 : now.some((value) => value > 0);
        };
        await expect.poll(withTraffic, { timeout: 60_000, interval: 1000, message: `panel ${panel.id} ${refId}: ${expression}` }).toBe(true);
        expect(
          (await values()).filter((value) => !(Number.isFinite(value) && value >= 0)),
          `panel ${panel.id} ${refId}: ${expression}`,
        ).toEqual([]);
      }
    }
    // The template variables' label_values() queries, as Grafana runs them: Prometheus' label values API.
    const labelValues = async (label: string, selector: string): Promise<string[]> =>
      promApi<string[]>(`/api/v1/label/${label}/values?match[]=${encodeURIComponent(dashboardQueries.substitute(selector, ALL))}`);
    const variables = Object.fromEntries(
      dashboard.templating.list
        .filter((variable) => variable.type === 'query')
        .map((variable) => {
          const text = typeof variable.query === 'string' ? variable.query : variable.query.query;
          const [, selector, label] = /^label_values\((.+), (\w+)\)$/.exec(text) ?? [];
          return [variable.name, { selector: selector ?? '', label: label ?? '' }];
        }),
    );
    const listed = async (name: string): Promise<string[]> => {
      const variable = variables[name];
      if (variable === undefined) throw new Error(`no variable ${name}`);
      return labelValues(variable.label, variable.selector);
    };
    expect(await listed('service')).toEqual(['shop']);
    expect(await listed('client')).toEqual(['alpha', 'beta', 'ledger']);
    expect(await listed('client_version')).toEqual(['0.9.0', '1.0.0', '2.0.0']);
    expect(await listed('instance')).toEqual(['shop-a', 'shop-b']);
  }, 600_000);

  it('over a range before a restart and one across it, every panel’s figure for the range is the query API’s for that range', async () => {
    /** The API's answer for the range (widened by it to whole minutes), and the fleet and alerts now. */
    const fromApi = async (range: Range) => {
      const window = `from=${range.startMs}&to=${range.endMs}`;
      const byClient = await api<MatrixAnswer>(`/api/v1/matrix?group=client&${window}`);
      const byVersion = await api<MatrixAnswer>(`/api/v1/matrix?group=client_version&${window}`);
      // The API counts whole minutes: the range's minute, which holds no request outside the range.
      expect([byClient.resolution, byClient.from]).toEqual(['minute', new Date(Math.floor(range.startMs / MINUTE_MS) * MINUTE_MS).toISOString()]);
      expect(Date.parse(byClient.to)).toBeGreaterThan(range.endMs);
      const rows = byClient.rows;
      const known = rows.reduce((sum, row) => sum + row.requests - row.serverUnknown, 0);
      const ids = [...new Set(rows.flatMap((row) => row.extensions.map((cell) => cell.id)))];
      const requests = rows.reduce((sum, row) => sum + row.requests, 0);
      const negotiated = (id: string): number => rows.reduce((sum, row) => sum + (row.extensions.find((cell) => cell.id === id)?.negotiated ?? 0), 0);
      const required = new Map<string, number>();
      for (const row of byVersion.rows)
        for (const cell of row.extensions)
          if (cell.required > 0) required.set(`${row.name ?? ''} ${cell.id}`, (required.get(`${row.name ?? ''} ${cell.id}`) ?? 0) + cell.required);

      const instances = (await api<{ instances: Instance[] }>('/api/v1/instances?limit=100')).instances.filter(
        (instance) => !instance.stale && instance.advertisedAt !== null,
      );
      const fleet: string[] = [];
      const perInstance: string[] = [];
      const skewed = new Map<string, number>();
      for (const service of new Set(instances.map((instance) => instance.service ?? ''))) {
        const members = instances.filter((instance) => (instance.service ?? '') === service);
        const serviceIds = new Set(members.flatMap((instance) => instance.advertises.map((entry) => entry.id)));
        for (const id of serviceIds) {
          const advertising = members.filter((instance) => instance.advertises.some((entry) => entry.id === id)).length;
          fleet.push(`${service} ${id} → ${advertising}/${members.length - advertising}`);
          if (advertising < members.length) skewed.set(service, (skewed.get(service) ?? 0) + 1);
        }
        for (const member of members)
          perInstance.push(`${service} ${member.instanceId ?? ''} → ${member.advertises.length}/${serviceIds.size - member.advertises.length}`);
      }
      const states = new Map<string, number>();
      for (const alert of (await api<{ alerts: AlertRecord[] }>('/api/v1/alerts?state=active&limit=100')).alerts) {
        const key = `${alert.rule} ${alert.state} ${alert.severity} ${alert.labels['service'] ?? ''}`;
        states.set(key, (states.get(key) ?? 0) + 1);
      }
      return {
        requestsPerService: [`shop → ${requests}`],
        perExtension: ids.map((id) => `${id} → ${negotiated(id) / known}`).sort(),
        // The API lists every id in every row; Prometheus has a series where some request of the client mentioned the id.
        matrix: rows
          .flatMap((row) =>
            row.extensions
              .filter((cell) => cell.clientDeclared + cell.serverAdvertised + cell.required > 0)
              .map((cell) => `${row.name ?? ''} ${cell.id} → ${cell.negotiatedShare}`),
          )
          .sort(),
        versions: byVersion.rows.map((row) => `${row.name ?? ''} ${row.version ?? ''} → ${row.requests}`).sort(),
        missing: byVersion.rows
          .flatMap((row) =>
            row.extensions.filter((cell) => cell.required > 0).map((cell) => `${row.name ?? ''} ${row.version ?? ''} ${cell.id} → ${cell.required}`),
          )
          .sort(),
        missingPerClient: [...required].map(([key, count]) => `shop ${key} → ${count}`).sort(),
        fleet: fleet.sort(),
        skewed: [...skewed].map(([service, count]) => `${service} → ${count}`).sort(),
        perInstance: perInstance.sort(),
        leftOut: [' → 0'],
        alerts: [...states].map(([key, count]) => `${key} → ${count}`).sort(),
      };
    };
    /** Every panel's query for the range, at its end; a rate panel's average rate over it times its length. */
    const fromPrometheus = async (range: Range) => {
      const at = range.endMs;
      const run = async (title: string, labels: string[], refId = 'A'): Promise<string[]> =>
        table(await query(exprFor(byTitle(title), range, refId), at), labels);
      const pairs = async (title: string, labels: string[]): Promise<string[]> => {
        const [a, b] = [await run(title, labels, 'A'), await run(title, labels, 'B')];
        const missing = new Map(b.map((line) => line.split(' → ') as [string, string]));
        return a.map((line) => {
          const [key, value] = line.split(' → ') as [string, string];
          return `${key} → ${value}/${missing.get(key)}`;
        });
      };
      const perSecond = (lines: string[]): string[] =>
        lines.map((line) => {
          const [key, value] = line.split(' → ') as [string, string];
          // rate() over the range × its length is the increase: a whole number, up to the float's last digits.
          const count = (Number(value) * (range.endMs - range.startMs)) / 1000;
          expect(Math.abs(count - Math.round(count)), `${line} over ${range.endMs - range.startMs} ms`).toBeLessThan(1e-6);
          return `${key} → ${Math.round(count)}`;
        });
      const shareOverTime = await run('Negotiated share per extension over time', ['extension']);
      const shareOverRange = await run('Negotiated share per extension over the range', ['extension']);
      // The share over time, its window the range, is the share over the range (up to the float's last digits);
      // a graph has no series for an id never negotiated, where the figure for the range says 0.
      const overTime = new Map(
        shareOverTime.map((line) => {
          const [id, share] = line.split(' → ') as [string, string];
          return [id, Number(share)];
        }),
      );
      expect(Object.fromEntries(overTime)).toEqual(
        Object.fromEntries(
          shareOverRange
            .map((line) => line.split(' → ') as [string, string])
            .filter(([id, share]) => overTime.has(id) || share !== '0')
            .map(([id, share]) => [id, expect.closeTo(Number(share), 12)]),
        ),
      );
      for (const value of overTime.values()) expect(value).toBeGreaterThan(0);
      return {
        requestsPerService: perSecond(await run('Requests per second by service', ['service'])),
        perExtension: shareOverRange,
        matrix: await run('Client × extension', ['client', 'extension']),
        versions: await run('Requests by client version', ['client', 'client_version']),
        missing: await run('-32021 answers by client version', ['client', 'client_version', 'extension']),
        missingPerClient: perSecond(await run('-32021 answers per second', ['service', 'client', 'extension'])),
        fleet: await pairs('Fleet skew', ['service', 'extension']),
        skewed: await run('Extensions not advertised by every', ['service']),
        perInstance: await pairs('Extensions advertised per live instance', ['service', 'service_instance']),
        leftOut: await run('Instance series left out', []),
        alerts: await run('Alerts pending or firing', ['alertname', 'alertstate', 'severity', 'service']),
      };
    };
    /** Requests counted from counter resets inside the range: 0 without a restart. */
    const resets = async (range: Range): Promise<number> =>
      Number((await query(`sum(resets(extscope_requests_total[${range.endMs - range.startMs}ms]))`, range.endMs))[0]?.value[1]);

    /**
     * Ranges within one UTC minute (the API's smallest step), all starting at the first scrape of a minute the
     * traffic before has left alone: each holds what its `during` and every earlier one did, and ends at a scrape
     * after the counts have settled. Both sides are compared at successive ending scrapes until they agree; the last
     * pair is compared either way. One minute for both ranges: a minute of their own each would wait for another.
     */
    await settled();
    const minute = Math.ceil(Date.now() / MINUTE_MS) * MINUTE_MS;
    await sleep(minute - Date.now() + 200);
    const startMs = await scrapeAfter(minute);
    const measure = async (during: () => Promise<void>) => {
      await during();
      await settled();
      let range: Range = { startMs, endMs: await scrapeAfter(Date.now() - 1000) };
      let pair = [await fromPrometheus(range), await fromApi(range)];
      for (let attempt = 0; attempt < 10 && JSON.stringify(pair[0]) !== JSON.stringify(pair[1]); attempt++) {
        await sleep(1000);
        range = { startMs, endMs: await scrapeAfter(Date.now() - 1000) };
        pair = [await fromPrometheus(range), await fromApi(range)];
      }
      expect(range.endMs, 'the range fits in its minute (the machine is too slow for this test otherwise)').toBeLessThan(minute + MINUTE_MS);
      expect(pair[0]).toEqual(pair[1]);
      return { range, figures: pair[1] as Awaited<ReturnType<typeof fromApi>> };
    };

    const ROUNDS = 4;
    // The first range: the collector as started.
    const first = await measure(async () => {
      for (let each = 0; each < ROUNDS; each++) await round();
    });
    // The second, the first and what follows: traffic, the collector restarted (its counters start again from zero),
    // less traffic: less than before, so that Prometheus sees each counter fall and counts a reset, as it does when
    // a collector restarts.
    const second = await measure(async () => {
      for (let each = 0; each < ROUNDS; each++) await round();
      await settled();
      collector.child.kill('SIGTERM');
      await collector.exited;
      collector = await startCollector();
      await round();
    });

    for (const { figures } of [first, second]) {
      // What the clients did in the range, as the API counts it (and so the dashboard): ledger was refused once a
      // round; beta negotiated tasks and never search; alpha negotiated search on shop-a only.
      expect(figures.missingPerClient).toEqual([`shop ledger com.example/replay → ${figures === first.figures ? ROUNDS : 2 * ROUNDS + 1}`]);
      expect(figures.matrix.filter((line) => line.startsWith('beta '))).toEqual([`beta ${SEARCH} → 0`, `beta ${TASKS} → 1`]);
      expect(figures.matrix.filter((line) => line.startsWith('alpha '))).toEqual([`alpha ${SEARCH} → 0.5`, `alpha ${TASKS} → 1`]);
      expect(figures.fleet).toEqual([`shop ${SEARCH} → 1/1`, `shop ${TASKS} → 2/0`]);
      expect(figures.perInstance).toEqual(['shop shop-a → 2/0', 'shop shop-b → 1/1']);
      expect(figures.skewed).toEqual(['shop → 1']);
      expect(figures.alerts).toEqual(['advertisement_skew firing warning shop → 1']);
    }
    expect(first.figures.requestsPerService).toEqual([`shop → ${4 * ROUNDS}`]);
    expect(second.figures.requestsPerService).toEqual([`shop → ${4 * (2 * ROUNDS + 1)}`]);
    // The restart is inside the second range and not the first; read as it stands, since the collector started,
    // the counter would say only what the restarted collector counted.
    expect(await resets(first.range)).toBe(0);
    expect(await resets(second.range)).toBeGreaterThan(0);
    const sinceStart = Number((await query('sum(extscope_requests_total)', second.range.endMs))[0]?.value[1]);
    expect(sinceStart).toBe(4);
  }, 600_000);

  it('the rate panels, at Grafana’s rate interval over minutes holding the restart, are never negative or infinite', async () => {
    const endMs = Date.now();
    const range: Range = { startMs: endMs - 3 * MINUTE_MS, endMs };
    for (const panel of dashboard.panels) {
      for (const target of panel.targets) {
        if (target.instant === true) continue;
        const expression = exprFor(panel, range, target.refId, '4s');
        const data = await promApi<{ result: { values: [number, string][] }[] }>(
          `/api/v1/query_range?query=${encodeURIComponent(expression)}&start=${seconds(range.startMs)}&end=${seconds(range.endMs)}&step=1`,
        );
        const values = data.result.flatMap((series) => series.values.map(([, value]) => Number(value)));
        expect(values.length, `panel ${panel.id}`).toBeGreaterThan(0);
        // NaN is 0/0, a share over a window without requests, which Grafana leaves as a gap; a reset misread
        // would be negative, or a spike.
        expect(
          values.filter((value) => !Number.isNaN(value) && !(Number.isFinite(value) && value >= 0)),
          `panel ${panel.id}: ${expression}`,
        ).toEqual([]);
      }
    }
  });
});
