/** A real Prometheus Alertmanager (Debian's prometheus-alertmanager, 0.25) for tests, clustering off. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Daemon, requireBinary, startDaemon } from './daemon.js';

export const ALERTMANAGER_BINARY = '/usr/bin/prometheus-alertmanager';

/** One alert as `GET /api/v2/alerts` lists it (the fields tests read). */
export interface AlertmanagerAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL: string;
  fingerprint: string;
  status: { state: string };
}

export interface Alertmanager extends Daemon {
  /** `GET /api/v2/alerts`: the alerts it holds that have not ended. */
  alerts(): Promise<AlertmanagerAlert[]>;
}

/** Routes everything to a receiver that notifies nobody: the test reads the alerts through the API. */
const CONFIG = `route:
  receiver: nobody
  group_wait: 1s
receivers:
  - name: nobody
`;

/**
 * Routes every alert on its own (grouped by all labels) to a webhook at `url`, resolved notifications included, with
 * the shortest waits: what a transition does reaches the webhook within seconds.
 */
export function webhookConfig(url: string): string {
  return `route:
  receiver: hook
  group_by: ['...']
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 24h
receivers:
  - name: hook
    webhook_configs:
      - url: '${url}'
        send_resolved: true
`;
}

/** `config`: the alertmanager.yml to run with (default: notify nobody). */
export async function startAlertmanager(config = CONFIG): Promise<Alertmanager> {
  const binary = requireBinary(ALERTMANAGER_BINARY, 'prometheus-alertmanager');
  const daemon = await startDaemon({
    name: 'alertmanager',
    binary,
    readyPath: '/-/ready',
    async prepare(dir, port) {
      await writeFile(join(dir, 'alertmanager.yml'), config);
      return [
        `--config.file=${join(dir, 'alertmanager.yml')}`,
        `--storage.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--cluster.listen-address=',
        '--log.level=warn',
      ];
    },
  });
  return {
    ...daemon,
    async alerts() {
      const response = await fetch(`${daemon.url}/api/v2/alerts`);
      if (!response.ok) throw new Error(`alertmanager: GET /api/v2/alerts answered ${response.status}`);
      return (await response.json()) as AlertmanagerAlert[];
    },
  };
}
