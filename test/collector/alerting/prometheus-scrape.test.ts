/**
 * A real Prometheus (Debian's package) scrapes a collector whose rules fired: the alert-state series are
 * queryable with their rule and labels, next to the evaluation time.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestCollector, tempDir } from '../helpers/collector.js';
import { alertingCollector, send } from './helpers.js';

const PROMETHEUS = '/usr/bin/prometheus';
const MINUTE = 60_000;

/** A port free a moment ago (Prometheus takes no port 0). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

describe('Prometheus scrapes the alert states', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;
  let prometheus: ChildProcess | undefined;
  let url = '';
  let log = '';

  beforeAll(async () => {
    if (!existsSync(PROMETHEUS)) throw new Error(`${PROMETHEUS} is missing: this test needs Debian's prometheus package (apt-get install -y prometheus)`);
    temp = await tempDir();
    const start = Date.now();
    let clock: { now: number };
    ({ collector, clock } = await alertingCollector(
      temp.dir,
      'rules:\n  - { name: stale, kind: stale_instance, after: 10m, minUptime: 0s, labels: { team: mcp } }\n',
      start - 11 * MINUTE,
    ));
    await send(collector.url, { service: 'shop', instance: 'shop-1', atMs: start - 11 * MINUTE, requests: [{ count: 1 }] });
    clock.now = start;
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const config = join(temp.dir, 'prometheus.yml');
    await writeFile(
      config,
      `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: extscope\n    static_configs:\n      - targets: ['${new URL(collector.url).host}']\n`,
    );
    prometheus = spawn(
      PROMETHEUS,
      [`--config.file=${config}`, `--storage.tsdb.path=${join(temp.dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`, '--log.level=warn'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prometheus.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  });
  afterAll(async () => {
    if (prometheus !== undefined && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus?.once('exit', resolve));
      prometheus.kill('SIGTERM');
      await exited;
    }
    await collector?.close();
    await temp?.cleanup();
  });

  async function query(expression: string): Promise<Sample[]> {
    try {
      const response = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expression)}`);
      const body = (await response.json()) as { status: string; data: { result: Sample[] } };
      return body.status === 'success' ? body.data.result : [];
    } catch {
      return [];
    }
  }

  it('the target is up and extscope_alerts carries the firing alert with its rule and labels', async () => {
    const cycle = await collector.alerting.evaluate();
    expect(cycle.firing.map((alert) => alert.rule)).toEqual(['stale']);
    await expect.poll(async () => (await query('up{job="extscope"}')).map((sample) => sample.value[1]), { timeout: 30_000, interval: 250 }).toEqual(['1']);
    const alerts = await (async () => {
      let found: Sample[] = [];
      await expect.poll(async () => (found = await query('extscope_alerts{alertstate="firing"}')).length, { timeout: 15_000, interval: 250 }).toBe(1);
      return found;
    })();
    const { __name__: _name, ...labels } = alerts[0]?.metric ?? {};
    // The alert's `instance` label meets the target's own: Prometheus keeps the alert's as `exported_instance`.
    expect(labels).toEqual({
      alertname: 'stale',
      alertstate: 'firing',
      rule: 'stale',
      kind: 'stale_instance',
      severity: 'warning',
      service: 'shop',
      exported_instance: 'shop-1',
      team: 'mcp',
      job: 'extscope',
      instance: new URL(collector.url).host,
    });
    expect(alerts[0]?.value[1]).toBe('1');
    const evaluations = await query('extscope_alert_evaluation_duration_seconds_count');
    expect(Number(evaluations[0]?.value[1])).toBeGreaterThanOrEqual(1);
    expect(log).not.toMatch(/level=error/);
  });

  it('extscope_build_info names the running version, next to the process and Node.js runtime series', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
    let info: Sample[] = [];
    await expect.poll(async () => (info = await query('extscope_build_info')).length, { timeout: 30_000, interval: 250 }).toBe(1);
    expect(info[0]?.metric).toMatchObject({ version, nodejs: process.version });
    expect(info[0]?.value[1]).toBe('1');
    for (const series of ['process_resident_memory_bytes', 'process_cpu_seconds_total', 'nodejs_heap_size_used_bytes']) {
      const samples = await query(series);
      expect(samples.length, series).toBeGreaterThanOrEqual(1);
      expect(Number(samples[0]?.value[1]), series).toBeGreaterThan(0);
    }
    // The event loop's delay is measured too (it may well be 0 on an idle collector).
    expect((await query('nodejs_eventloop_lag_p99_seconds')).length).toBe(1);
  });
});
