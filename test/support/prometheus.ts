/** A real Prometheus server (Debian's prometheus, 2.42) for tests, scraping one target. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Daemon, requireBinary, startDaemon } from './daemon.js';

export const PROMETHEUS_BINARY = '/usr/bin/prometheus';

export interface PrometheusTarget {
  /** `http://127.0.0.1:1234`: scraped at `/metrics`. */
  url: string;
  bearerToken?: string | undefined;
}

export interface InstantSample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface ScrapeTarget {
  labels: Record<string, string>;
  health: string;
  lastError: string;
  scrapeUrl: string;
}

export interface Prometheus extends Daemon {
  /** `GET /api/v1/query`: an instant vector. */
  query(expression: string): Promise<InstantSample[]>;
  /** `GET /api/v1/targets`: the active targets. */
  targets(): Promise<ScrapeTarget[]>;
}

export async function startPrometheus(target: PrometheusTarget): Promise<Prometheus> {
  const binary = requireBinary(PROMETHEUS_BINARY, 'prometheus');
  const { host } = new URL(target.url);
  const daemon = await startDaemon({
    name: 'prometheus',
    binary,
    readyPath: '/-/ready',
    async prepare(dir, port) {
      const auth = target.bearerToken === undefined ? '' : `    authorization:\n      credentials_file: ${join(dir, 'token')}\n`;
      if (target.bearerToken !== undefined) await writeFile(join(dir, 'token'), target.bearerToken);
      await writeFile(
        join(dir, 'prometheus.yml'),
        `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: extscope\n    metrics_path: /metrics\n${auth}    static_configs:\n      - targets: ['${host}']\n`,
      );
      return [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ];
    },
  });
  const api = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${daemon.url}${path}`);
    const body = (await response.json()) as { status: string; data: T; error?: string };
    if (!response.ok || body.status !== 'success') throw new Error(`prometheus: GET ${path} answered ${response.status}: ${body.error ?? ''}`);
    return body.data;
  };
  return {
    ...daemon,
    async query(expression) {
      const data = await api<{ resultType: string; result: InstantSample[] }>(`/api/v1/query?query=${encodeURIComponent(expression)}`);
      return data.result;
    },
    async targets() {
      return (await api<{ activeTargets: ScrapeTarget[] }>('/api/v1/targets?state=active')).activeTargets;
    },
  };
}
