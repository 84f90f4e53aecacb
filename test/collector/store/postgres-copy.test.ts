import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MetricsBatch, SeriesKind, Temporality } from '../../../collector/model/batches.js';
import { MS_PER_DAY, MS_PER_MINUTE, msToNanos } from '../../../collector/model/time.js';
import { openPostgresStore } from '../../../collector/store/postgres/index.js';
import { openSqliteStore } from '../../../collector/store/sqlite/index.js';
import type { Alert } from '../../../collector/model/alerts.js';
import type { StoreRoles } from '../../../collector/store/store.js';
import { tempDir } from '../helpers/collector.js';
import { testDatabases } from './postgres-server.js';

const CLI = fileURLToPath(new URL('../../../dist/bin/extscope.js', import.meta.url));
const NOW = Date.now();
const T0 = NOW - 30 * MS_PER_MINUTE;
const RETENTION = { minuteDays: 7, hourDays: 400, dedupHours: 6 };
const TABLES = [
  'instances',
  'cells',
  'series',
  'streams',
  'point_log',
  'cumulative_state',
  'series_minute',
  'series_hour',
  'cell_minute',
  'cell_hour',
  'cell_day',
  'advertised',
  'advertised_counts',
  'span_examples',
  'dimension_values',
  'extension_id_limits',
  'alerts',
  'alert_transitions',
  'alert_deliveries',
];

function batch(client: string, temporality: Temporality, minute: number, value: number, extension = false): MetricsBatch {
  const dims = {
    kind: extension ? SeriesKind.Extension : SeriesKind.Requests,
    serverName: 'server',
    serverVersion: '1.0',
    method: 'tools/call',
    era: 'modern',
    protocolVersion: '2026-07-28',
    clientName: client,
    clientVersion: '1.0',
    clientDeclaration: 'declared',
    serverDeclaration: 'declared',
    outcome: 'complete',
    statusCode: null,
    extensionId: extension ? 'io.modelcontextprotocol/tasks' : null,
    clientDeclared: extension ? true : null,
    serverDeclared: extension ? true : null,
    negotiated: extension ? true : null,
    required: extension ? false : null,
  } as const;
  const resource = {
    service: 'svc',
    instanceId: `i-${client}`,
    serviceVersion: '2.0',
    host: 'h',
    serverName: 'server',
    serverVersion: '1.0',
    transport: null,
    deploymentEnvironment: null,
    k8sNamespace: null,
    k8sDeployment: null,
    canonical: client,
    key: client,
    instanceDerived: false,
  };
  const startMinute = temporality === Temporality.Cumulative ? 0 : minute - 1;
  return {
    resources: [
      {
        resource,
        counters: [
          {
            dims,
            streamScope: `scope\u0000${temporality}`,
            streamAttributes: JSON.stringify(dims),
            schema1Attributes: '',
            temporality,
            startNs: msToNanos(T0 + startMinute * MS_PER_MINUTE),
            timeNs: msToNanos(T0 + minute * MS_PER_MINUTE),
            value,
          },
        ],
        advertised: [
          { serverName: 'server', serverVersion: '1.0', extensionId: 'io.modelcontextprotocol/tasks', fingerprint: 'f', timeMs: T0 + minute * MS_PER_MINUTE },
        ],
        advertisedCounts: [{ serverName: 'server', serverVersion: '1.0', count: 1, timeMs: T0 + minute * MS_PER_MINUTE }],
      },
    ],
    ignored: new Map(),
    rejections: [],
    rejectedReason: undefined,
  };
}

/** The closed-bucket facts in `meta` (common/closed-buckets.ts). */
async function closedMeta(client: pg.Client): Promise<Record<string, string>> {
  const { rows } = await client.query<{ key: string; value: string }>(
    "SELECT key, value FROM meta WHERE key IN ('closed_generation', 'open_hour') ORDER BY key",
  );
  return Object.fromEntries(rows.map((row) => [row.key, row.value]));
}

const copy = (...args: string[]) => spawnSync(process.execPath, [CLI, 'db', 'copy', ...args], { encoding: 'utf8', timeout: 60_000 });
const range = { fromMs: NOW - MS_PER_DAY, toMs: NOW + MS_PER_DAY };
const sorted = async (store: StoreRoles) => (await store.reader.cellTotals(range)).cells.map((cell) => JSON.stringify(cell)).sort();

describe('extscope db copy (SQLite → PostgreSQL)', () => {
  const databases = testDatabases('copy');
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let dbPath: string;
  let url: string;

  beforeAll(async () => {
    temp = await tempDir();
    dbPath = join(temp.dir, 'source.db');
    url = await databases.create();
    const sqlite = openSqliteStore({ path: dbPath, clock: () => NOW, retention: RETENTION, synchronous: 'normal', examplesPerCell: 2 });
    for (let minute = 1; minute <= 10; minute++) {
      await sqlite.ingest.applyMetrics(batch('alpha', Temporality.Delta, minute, 2));
      await sqlite.ingest.applyMetrics(batch('beta', Temporality.Cumulative, minute, minute * 3));
      await sqlite.ingest.applyMetrics(batch('gamma', Temporality.Delta, minute, 1, true));
    }
    await sqlite.idLimits.admitIds([{ instance: '["svc","i-1"]', hour: Math.floor(NOW / (60 * MS_PER_MINUTE)), ids: ['x.y/one', 'x.y/two'] }]);
    const alert: Alert = {
      fingerprint: 'fp-1',
      rule: 'skew',
      kind: 'advertisement_skew',
      severity: 'warning',
      state: 'firing',
      labels: { service: 'svc', alertname: 'skew', severity: 'warning' },
      annotations: { summary: 'skew' },
      activeSinceMs: NOW - 10 * MS_PER_MINUTE,
      firingSinceMs: NOW - 5 * MS_PER_MINUTE,
      resolvedAtMs: undefined,
      dashboardPath: '/?view=fleet&service=svc',
    };
    await sqlite.alerts.recordAlerts({
      alerts: [alert],
      transitions: [
        { id: 't-1', from: 'inactive', to: 'pending', atMs: NOW - 10 * MS_PER_MINUTE, alert },
        { id: 't-2', from: 'pending', to: 'firing', atMs: NOW - 5 * MS_PER_MINUTE, alert },
      ],
    });
    await sqlite.deliveries.recordDeliveries([
      {
        receiver: 'webhook',
        transitionId: 't-2',
        fingerprint: 'fp-1',
        rule: 'skew',
        from: 'pending',
        to: 'firing',
        state: 'delivered',
        attempts: 1,
        lastStatus: 204,
        queuedAtMs: NOW - 5 * MS_PER_MINUTE,
        atMs: NOW - 5 * MS_PER_MINUTE,
      },
    ]);
    await sqlite.lifecycle.close();
  });
  afterAll(async () => {
    await databases.dropAll();
    await temp?.cleanup();
  });

  it('copies every table with identical counts and totals; the copied state goes on converting and deduplicating', async () => {
    const result = copy('--from', dbPath, '--to', url);
    expect(result.stderr).not.toMatch(/error/i);
    expect(result.status).toBe(0);
    const printed = Object.fromEntries(
      result.stdout
        .trim()
        .split('\n')
        .map((line) => line.split('\t'))
        .map(([table, source, target]) => [table, [Number(source), Number(target)]]),
    );
    const source = new Database(dbPath, { readonly: true });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      for (const table of TABLES) {
        const inSqlite = source.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
        const { rows } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${table}`);
        expect([table, Number(rows[0]?.n)]).toEqual([table, inSqlite]);
        expect(printed[table]).toEqual([inSqlite, inSqlite]);
      }
      expect(source.prepare('SELECT count(*) FROM cumulative_state').pluck().get()).toBe(1);
      // The open hour as folded in the source (long-range reads keep the hours before it); a generation of its own.
      const openHour = source.prepare("SELECT value FROM meta WHERE key = 'open_hour'").pluck().get();
      expect(Number(openHour)).toBe(Math.floor((T0 + 10 * MS_PER_MINUTE) / (60 * MS_PER_MINUTE)));
      expect(await closedMeta(client)).toEqual({ closed_generation: '1', open_hour: String(openHour) });
    } finally {
      source.close();
      await client.end();
    }

    const sqlite = openSqliteStore({ path: dbPath, clock: () => NOW, retention: RETENTION, synchronous: 'normal', examplesPerCell: 2 });
    const postgres = await openPostgresStore({ url, clock: () => NOW, retention: RETENTION, examplesPerCell: 2 });
    try {
      expect(await sorted(postgres)).toEqual(await sorted(sqlite));
      const everything = { limit: 10, offset: 0 };
      expect(await postgres.alerts.alerts(everything)).toEqual(await sqlite.alerts.alerts(everything));
      expect((await postgres.alerts.alerts(everything)).alerts.map((alert) => alert.transitions.map((t) => t.to))).toEqual([['pending', 'firing']]);
      expect(await postgres.deliveries.deliveries({ limit: 10 })).toEqual(await sqlite.deliveries.deliveries({ limit: 10 }));
      const hour = { instance: '["svc","i-1"]', hour: Math.floor(NOW / (60 * MS_PER_MINUTE)) };
      expect(await postgres.idLimits.admittedIds([hour])).toEqual(await sqlite.idLimits.admittedIds([hour]));
      expect((await postgres.reader.instances({})).map((instance) => [instance.instanceId, instance.advertised.length])).toEqual(
        (await sqlite.reader.instances({})).map((instance) => [instance.instanceId, instance.advertised.length]),
      );
      // beta's next cumulative total adds only its increment; a retry of alpha's last delta adds nothing.
      expect(await postgres.ingest.applyMetrics(batch('beta', Temporality.Cumulative, 11, 40))).toMatchObject({ applied: 1, duplicates: 0 });
      expect(await postgres.ingest.applyMetrics(batch('alpha', Temporality.Delta, 10, 2))).toMatchObject({ applied: 0, duplicates: 1 });
      const cells = (await postgres.reader.cellTotals(range)).cells;
      expect(
        cells
          .filter((cell) => cell.kind === SeriesKind.Requests)
          .map((cell) => [cell.clientName, cell.count])
          .sort(),
      ).toEqual([
        ['alpha', 20],
        ['beta', 40],
      ]);
    } finally {
      await sqlite.lifecycle.close();
      await postgres.lifecycle.close();
    }
  });

  it('refuses a target that holds data (exit 3, nothing changed) unless --force, which replaces it', async () => {
    const refused = copy('--from', dbPath, '--to', url);
    expect(refused.status).toBe(3);
    expect(refused.stderr).toContain('--force');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      // The first test's extra export is still there: the refusal changed nothing.
      expect(Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM cumulative_state WHERE value = 40')).rows[0]?.n)).toBe(1);
      const forced = copy('--from', dbPath, '--to', url, '--force');
      expect(forced.status).toBe(0);
      expect(Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM cumulative_state WHERE value = 40')).rows[0]?.n)).toBe(0);
      // As copied: ten increments each of alpha, beta and gamma; the extra export's row is gone.
      expect(Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM point_log')).rows[0]?.n)).toBe(30);
      // Past the replaced database's generation: a replica's closed parts read before the copy are read anew.
      expect((await closedMeta(client)).closed_generation).toBe('2');
    } finally {
      await client.end();
    }
  });
});
