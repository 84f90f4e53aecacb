/** The Grafana dashboard shipped in deploy/grafana, read as its JSON model, and the PromQL queries it holds. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './processes.js';

export const DASHBOARD_PATH = join(ROOT, 'deploy', 'grafana', 'dashboards', 'extscope.json');

export interface DashboardDatasource {
  type: string;
  uid: string;
}

export interface DashboardTarget {
  refId: string;
  expr: string;
  datasource?: DashboardDatasource;
  instant?: boolean;
  format?: string;
}

/** A data link: Grafana interpolates its URL with the dashboard's variables and the clicked series' or row's values. */
export interface DashboardLink {
  title: string;
  url: string;
}

export interface DashboardPanel {
  id: number;
  type: string;
  title: string;
  datasource?: DashboardDatasource;
  gridPos: { x: number; y: number; w: number; h: number };
  targets: DashboardTarget[];
  fieldConfig?: { defaults: { links?: DashboardLink[] } };
  transformations?: { id: string; options: Record<string, unknown> }[];
}

export interface DashboardVariable {
  name: string;
  type: string;
  datasource?: DashboardDatasource;
  query: { query: string } | string;
  current?: { value?: string | string[] };
  includeAll?: boolean;
  multi?: boolean;
  allValue?: string;
}

/** What importing the dashboard asks for: `${NAME}` in the JSON is replaced by the answer. */
export interface DashboardInput {
  name: string;
  type: string;
  pluginId?: string;
}

export interface Dashboard {
  __inputs?: DashboardInput[];
  uid: string;
  title: string;
  schemaVersion: number;
  panels: DashboardPanel[];
  templating: { list: DashboardVariable[] };
  links: (DashboardLink & { type: string })[];
}

export function readDashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD_PATH, 'utf8')) as Dashboard;
}

export const dashboardQueries = {
  /** `$name` and `${name}` replaced by the values given; a variable without one is an error (a query Prometheus would refuse). */
  substitute(expression: string, values: Record<string, string>): string {
    return expression.replace(/\$\{(\w+)\}|\$(\w+)/g, (_match, braced: string | undefined, bare: string | undefined) => {
      const name = (braced ?? bare) as string;
      const value = values[name];
      if (value === undefined) throw new Error(`no value for the variable $${name} in ${expression}`);
      return value;
    });
  },
  /** Every panel target's query, variables substituted. */
  all(dashboard: Dashboard, values: Record<string, string>): { panel: DashboardPanel; target: DashboardTarget; expression: string }[] {
    return dashboard.panels.flatMap((panel) =>
      panel.targets.map((target) => ({ panel, target, expression: dashboardQueries.substitute(target.expr, values) })),
    );
  },
};
