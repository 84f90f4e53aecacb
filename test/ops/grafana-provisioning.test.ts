/**
 * The monitoring profile of docker-compose.yml (Prometheus and Grafana) cannot be run here (no Docker engine, no
 * Grafana): this checks what can be. The dashboard JSON is well formed for Grafana (ids, grid, an import input and
 * a variable for the datasource instead of a uid, the template variables, counters read over the time range;
 * test/dashboard/page/grafana-links.test.ts checks its links); the provisioning files provide a default Prometheus datasource and mount that
 * dashboard; the compose services mount files that exist; Prometheus' scrape configuration targets the collector
 * with the read token, and promtool accepts it. That its queries answer the API's numbers for a time range is
 * test/e2e/grafana-dashboard.test.ts.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { DEFAULT_PORT, ENVIRONMENT } from '../../collector/config.js';
import { requireBinary } from '../support/daemon.js';
import { DASHBOARD_PATH, type DashboardDatasource, readDashboard } from '../support/grafana-dashboard.js';
import { ROOT } from '../support/processes.js';

const run = promisify(execFile);

interface Service {
  image?: string;
  profiles?: string[];
  ports?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  secrets?: string[];
  depends_on?: Record<string, unknown> | string[];
}

const compose = parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
  secrets?: Record<string, { environment?: string; file?: string }>;
};
const prometheusService = compose.services['prometheus'];
const grafanaService = compose.services['grafana'];
const dashboard = readDashboard();
const datasources = parse(readFileSync(join(ROOT, 'deploy', 'grafana', 'provisioning', 'datasources', 'extscope.yaml'), 'utf8')) as {
  apiVersion: number;
  datasources: { uid: string; type: string; url: string; name: string; isDefault: boolean }[];
};
const providers = parse(readFileSync(join(ROOT, 'deploy', 'grafana', 'provisioning', 'dashboards', 'extscope.yaml'), 'utf8')) as {
  apiVersion: number;
  providers: { name: string; type: string; options: { path: string } }[];
};
const scrape = parse(readFileSync(join(ROOT, 'deploy', 'prometheus', 'prometheus.yml'), 'utf8')) as {
  scrape_configs: {
    job_name: string;
    metrics_path: string;
    authorization: { type?: string; credentials_file: string };
    static_configs: { targets: string[] }[];
  }[];
};

/** A service's bind mounts (`./host:container[:ro]`) as host path (from the repository root) → container path. */
function bindMounts(service: Service | undefined): Map<string, string> {
  const mounts = new Map<string, string>();
  for (const volume of service?.volumes ?? []) {
    const [host, container] = volume.split(':') as [string, string];
    if (host.startsWith('./')) mounts.set(host.slice(2), container);
  }
  return mounts;
}

/** The container path a host file lands at, through the bind mount of it or of a directory holding it. */
function containerPathOf(service: Service | undefined, hostFile: string): string | undefined {
  for (const [host, container] of bindMounts(service)) {
    if (hostFile === host) return container;
    if (hostFile.startsWith(`${host}/`)) return posix.join(container, hostFile.slice(host.length + 1));
  }
  return undefined;
}

/** Grafana's own variables that a query may use beside the dashboard's. */
const GRAFANA_BUILTINS = new Set(['__rate_interval', '__interval', '__range', '__range_s']);

describe('the Grafana dashboard JSON', () => {
  it('has a uid, a title, a schema version and panels with unique positive ids', () => {
    expect(dashboard.uid).toMatch(/^[\w-]{1,40}$/);
    expect(dashboard.title).not.toBe('');
    expect(Number.isInteger(dashboard.schemaVersion)).toBe(true);
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(ids.every((id) => Number.isInteger(id) && id > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('lays its panels out within the 24-column grid, none overlapping another', () => {
    for (const { id, gridPos } of dashboard.panels) {
      const { x, y, w, h } = gridPos;
      expect([x, y, w, h].every(Number.isInteger), `panel ${id}`).toBe(true);
      expect(x >= 0 && y >= 0 && w > 0 && h > 0 && x + w <= 24, `panel ${id}`).toBe(true);
    }
    for (const a of dashboard.panels) {
      for (const b of dashboard.panels) {
        if (a.id >= b.id) continue;
        const apart =
          a.gridPos.x + a.gridPos.w <= b.gridPos.x ||
          b.gridPos.x + b.gridPos.w <= a.gridPos.x ||
          a.gridPos.y + a.gridPos.h <= b.gridPos.y ||
          b.gridPos.y + b.gridPos.h <= a.gridPos.y;
        expect(apart, `panels ${a.id} and ${b.id} overlap`).toBe(true);
      }
    }
  });

  it('names no datasource uid: every query uses the Prometheus variable, which importing binds to the datasource asked for', () => {
    // Importing asks for one Prometheus datasource and writes its uid where the JSON says ${DS_PROMETHEUS}: only
    // in the variable's current value, so the datasource can still be changed from the variable afterwards.
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ name: 'DS_PROMETHEUS', type: 'datasource', pluginId: 'prometheus' })]);
    const datasourceVariable = dashboard.templating.list.find((variable) => variable.type === 'datasource');
    expect(datasourceVariable).toMatchObject({ name: 'datasource', query: 'prometheus', current: { value: '${DS_PROMETHEUS}' } });
    const text = readFileSync(DASHBOARD_PATH, 'utf8');
    expect(text.match(/\$\{DS_PROMETHEUS\}/g)).toHaveLength(1);
    // Provisioned (no import), the variable takes the default Prometheus datasource: the provisioned one is it.
    expect(datasources.datasources.map((source) => [source.type, source.isDefault])).toEqual([['prometheus', true]]);

    const expected: DashboardDatasource = { type: 'prometheus', uid: '${datasource}' };
    const used: DashboardDatasource[] = [];
    const variables = new Set(dashboard.templating.list.map((variable) => variable.name));
    for (const variable of dashboard.templating.list) if (variable.datasource !== undefined) used.push(variable.datasource);
    for (const panel of dashboard.panels) {
      if (panel.datasource !== undefined) used.push(panel.datasource);
      expect(panel.targets.length, `panel ${panel.id}`).toBeGreaterThan(0);
      const refIds = panel.targets.map((target) => target.refId);
      expect(new Set(refIds).size, `panel ${panel.id} refIds`).toBe(refIds.length);
      for (const target of panel.targets) {
        expect(target.datasource, `panel ${panel.id} ${target.refId}`).toEqual(expected);
        used.push(target.datasource as DashboardDatasource);
        expect(target.expr.trim(), `panel ${panel.id} ${target.refId}`).not.toBe('');
        for (const [, braced, bare] of target.expr.matchAll(/\$\{(\w+)\}|\$(\w+)/g)) {
          const name = (braced ?? bare) as string;
          expect(variables.has(name) || GRAFANA_BUILTINS.has(name), `panel ${panel.id} uses $${name}`).toBe(true);
        }
      }
    }
    expect(used.length).toBeGreaterThan(dashboard.panels.length);
    for (const source of used) expect(source).toEqual(expected);
  });

  it('has the variables service, client, client version and instance, each a multi-value label_values() query with All meaning any value', () => {
    const queries = Object.fromEntries(
      dashboard.templating.list
        .filter((variable) => variable.type === 'query')
        .map((variable) => {
          expect(variable, variable.name).toMatchObject({ includeAll: true, multi: true, allValue: '.*' });
          return [variable.name, typeof variable.query === 'string' ? variable.query : variable.query.query];
        }),
    );
    expect(queries).toEqual({
      service: 'label_values(extscope_requests_total, service)',
      client: 'label_values(extscope_requests_total{service=~"$service"}, client)',
      client_version: 'label_values(extscope_requests_total{service=~"$service", client=~"$client"}, client_version)',
      instance: 'label_values(extscope_instance_advertises{service=~"$service"}, service_instance)',
    });
    // Every query reading request counters narrows by service, client and client version; the per-instance
    // panel's by instance.
    const expressions = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));
    for (const expression of expressions) {
      for (const [selector] of expression.matchAll(/extscope_(?:extension_)?requests_total\{[^}]*\}|extscope_missing_capability_errors_total\{[^}]*\}/g))
        expect(selector).toMatch(/service=~"\$service", client=~"\$client", client_version=~"\$client_version"/);
    }
    expect(expressions.filter((expression) => expression.includes('service_instance=~"$instance"'))).toHaveLength(2);
  });

  it('reads every counter over the time range: increase(…[$__range]) in figures for the range, rate(…[$__rate_interval]) in graphs', () => {
    let counters = 0;
    for (const panel of dashboard.panels) {
      for (const target of panel.targets) {
        const where = `panel ${panel.id} ${target.refId}: ${target.expr}`;
        // A counter selector (a name ending in _total), its label matchers, then what follows it.
        for (const match of target.expr.matchAll(/(\w+)\((extscope_\w+_total)(\{[^}]*\})?(\[[^\]]*\])?/g)) {
          counters++;
          const [, fn, , , window] = match;
          if (target.instant === true) expect([fn, window], where).toEqual(['increase', '[$__range]']);
          else expect([fn, window], where).toEqual(['rate', '[$__rate_interval]']);
        }
        // No counter is read bare (outside increase/rate), and no gauge is put through them.
        expect(target.expr.replace(/(?:increase|rate)\(extscope_\w+_total(?:\{[^}]*\})?\[[^\]]*\]\)/g, ''), where).not.toMatch(/_total\b/);
        expect(target.expr, where).not.toMatch(/(?:increase|rate)\((?!extscope_\w+_total)/);
      }
    }
    expect(counters).toBeGreaterThan(10);
  });

  it('the matrix table pivots on labels its query keeps', () => {
    for (const panel of dashboard.panels) {
      for (const transformation of panel.transformations ?? []) {
        if (transformation.id !== 'groupingToMatrix') continue;
        const { columnField, rowField } = transformation.options as { columnField: string; rowField: string };
        for (const target of panel.targets)
          expect(target.expr, `panel ${panel.id}`).toMatch(new RegExp(`sum by \\((?=[^)]*\\b${columnField}\\b)(?=[^)]*\\b${rowField}\\b)`));
      }
    }
  });
});

describe('docker-compose.yml monitoring profile', () => {
  it('runs Prometheus and Grafana only with --profile monitoring, with their named volumes declared', () => {
    expect(prometheusService?.profiles).toEqual(['monitoring']);
    expect(grafanaService?.profiles).toEqual(['monitoring']);
    for (const service of [prometheusService, grafanaService]) {
      for (const volume of service?.volumes ?? []) {
        const [source] = volume.split(':') as [string];
        if (!source.startsWith('./')) expect(Object.keys(compose.volumes)).toContain(source);
      }
    }
  });

  it('mounts files that exist: the scrape configuration, the provisioning and the dashboards', () => {
    for (const service of [prometheusService, grafanaService]) {
      for (const host of bindMounts(service).keys()) expect(existsSync(join(ROOT, host)), host).toBe(true);
    }
    expect(containerPathOf(prometheusService, 'deploy/prometheus/prometheus.yml')).toBe('/etc/prometheus/prometheus.yml');
    expect(containerPathOf(grafanaService, 'deploy/grafana/provisioning/datasources/extscope.yaml')).toBe(
      '/etc/grafana/provisioning/datasources/extscope.yaml',
    );
    expect(containerPathOf(grafanaService, 'deploy/grafana/provisioning/dashboards/extscope.yaml')).toBe('/etc/grafana/provisioning/dashboards/extscope.yaml');
    // The dashboard provider reads the directory the dashboard JSON is mounted in; Grafana's home dashboard is that file.
    const dashboardInContainer = containerPathOf(grafanaService, posix.relative(ROOT, DASHBOARD_PATH));
    expect(providers.apiVersion).toBe(1);
    expect(providers.providers.map((provider) => [provider.type, provider.options.path])).toEqual([['file', posix.dirname(dashboardInContainer ?? '')]]);
    expect(grafanaService?.environment?.['GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH']).toBe(dashboardInContainer);
  });

  it('Grafana’s datasource is the prometheus service; Prometheus scrapes the collector service with the read token as a secret file', () => {
    const [source] = datasources.datasources;
    const url = new URL(source?.url ?? '');
    expect(url.hostname).toBe('prometheus');
    expect(prometheusService?.ports).toContain(`${url.port}:${url.port}`);

    const [job] = scrape.scrape_configs;
    expect(job?.metrics_path).toBe('/metrics');
    const targets = job?.static_configs.flatMap((config) => config.targets) ?? [];
    expect(targets).toEqual([`collector:${DEFAULT_PORT}`]);
    expect(Object.keys(compose.services)).toContain('collector');
    expect(compose.services['collector']?.ports).toContain(`${DEFAULT_PORT}:${DEFAULT_PORT}`);

    // Compose mounts a service's secret at /run/secrets/<name>; this one is the collector's read token.
    expect(job?.authorization.credentials_file).toMatch(/^\/run\/secrets\/[\w-]+$/);
    const secret = posix.basename(job?.authorization.credentials_file ?? '');
    expect(prometheusService?.secrets).toEqual([secret]);
    expect(compose.secrets?.[secret]).toEqual({ environment: 'EXTSCOPE_READ_TOKEN' });
    expect(ENVIRONMENT.map((variable) => variable.name)).toContain('EXTSCOPE_READ_TOKEN');
    expect(compose.services['collector']?.environment?.['EXTSCOPE_READ_TOKEN']).toMatch(/^\$\{EXTSCOPE_READ_TOKEN/);
  });

  it('promtool accepts the scrape configuration (its token file present)', async () => {
    const promtool = requireBinary('/usr/bin/promtool', 'prometheus');
    const dir = await mkdtemp(join(tmpdir(), 'extscope-promtool-'));
    try {
      const config = structuredClone(scrape);
      for (const job of config.scrape_configs) job.authorization.credentials_file = join(dir, 'read-token');
      await writeFile(join(dir, 'read-token'), 'a-read-token');
      await writeFile(join(dir, 'prometheus.yml'), stringify(config));
      const { stdout } = await run(promtool, ['check', 'config', join(dir, 'prometheus.yml')]);
      expect(stdout).toMatch(/SUCCESS/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
