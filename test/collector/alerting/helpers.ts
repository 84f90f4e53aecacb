import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { type TestCollector, getJson, startTestCollector } from '../helpers/collector.js';
import { type Json, MINUTE_NS, advertisedPoint, extensionPoint, metricsRequest, msToNs, postMetrics, processEnded, requestPoint } from '../helpers/otlp.js';

export interface AlertJson {
  fingerprint: string;
  rule: string;
  kind: string;
  severity: string;
  state: 'pending' | 'firing' | 'resolved';
  labels: Record<string, string>;
  annotations: Record<string, string>;
  activeSince: string;
  firingSince: string | null;
  resolvedAt: string | null;
  dashboardPath: string;
  transitions: { from: string; to: string; at: string }[];
}

export interface AlertsJson {
  evaluation: { rulesFile: string | null; intervalSeconds: number; rules: number; lastEvaluation: string | null };
  total: number;
  nextOffset: number | null;
  alerts: AlertJson[];
}

/** A collector on its own clock (`clock.now`, moved by the test) evaluating the rules in `rules` (YAML). */
export async function alertingCollector(dir: string, rules: string, start: number): Promise<{ collector: TestCollector; clock: { now: number } }> {
  const clock = { now: start };
  const rulesPath = join(dir, 'rules.yaml');
  await writeFile(rulesPath, rules);
  const collector = await startTestCollector(dir, { rulesPath, clock: () => clock.now, alertIntervalMs: 3_600_000 });
  return { collector, clock };
}

export async function alerts(url: string, query = ''): Promise<AlertsJson> {
  const { status, body } = await getJson<AlertsJson>(`${url}/api/v1/alerts${query}`);
  expect(status, JSON.stringify(body)).toBe(200);
  return body;
}

/** The alerts pending or firing, as `rule state {labels without alertname and severity}` lines, sorted. */
export async function active(url: string): Promise<string[]> {
  return (await alerts(url, '?state=active')).alerts
    .map(({ rule, state, labels: { alertname: _name, severity: _severity, ...labels } }) => `${rule} ${state} ${JSON.stringify(labels)}`)
    .sort();
}

/** An OTLP export as the agent sends it, for one instance, with its points at minute `atMs` (delta, one minute long). */
export interface Traffic {
  service: string;
  instance?: string;
  atMs: number;
  requests?: { client?: string; version?: string; count: number; outcome?: string; statusCode?: string; serverDeclaration?: 'unknown' | 'none' | 'declared' }[];
  extensions?: { id: string; client?: string; version?: string; count: number; clientDeclared: boolean; serverDeclared: boolean; required?: boolean }[];
  advertised?: { id: string; fingerprint?: string }[];
  /** How the process is reached (`stdio`: one client session per process). */
  transport?: 'stdio' | 'http';
  /** The export is the process's last (`extscope.process.ended`). */
  ended?: boolean;
}

export async function send(url: string, traffic: Traffic): Promise<void> {
  const timeNs = msToNs(traffic.atMs);
  const startNs = timeNs - MINUTE_NS;
  const extra = (statusCode: string | undefined): Json[] | undefined =>
    statusCode === undefined ? undefined : [{ key: 'rpc.response.status_code', value: { stringValue: statusCode } }];
  const request = metricsRequest({
    resource: { service: traffic.service, instance: traffic.instance ?? `${traffic.service}-1`, transport: traffic.transport },
    requests: (traffic.requests ?? []).map((spec) =>
      requestPoint({
        client: spec.client ?? 'alpha',
        version: spec.version ?? '1.0.0',
        count: spec.count,
        outcome: spec.outcome,
        serverDeclaration: spec.serverDeclaration,
        extra: extra(spec.statusCode),
        startNs,
        timeNs,
      }),
    ),
    extensions: (traffic.extensions ?? []).map((spec) =>
      extensionPoint({ ...spec, client: spec.client ?? 'alpha', version: spec.version ?? '1.0.0', startNs, timeNs }),
    ),
    ...(traffic.advertised === undefined
      ? {}
      : { advertised: traffic.advertised.map((spec) => advertisedPoint({ id: spec.id, fingerprint: spec.fingerprint ?? 'fp-empty', timeNs })) }),
    ...(traffic.ended === true && { other: [processEnded(timeNs)] }),
  });
  const response = await postMetrics(url, request);
  expect(response.status, await response.text()).toBe(200);
}
