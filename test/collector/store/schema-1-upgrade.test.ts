import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findMigrationsDir, loadMigrations } from '../../../collector/store/common/migrations.js';
import { type MatrixJson, getJson, startTestCollector, tempDir } from '../helpers/collector.js';
import { CUMULATIVE, DELTA, type Json, attribute, postMetrics } from '../helpers/otlp.js';

/**
 * test/fixtures/schema-1/collector.db was written by the collector at schema version 1 (commit e12f6d9, whose
 * streams were keyed by attribute position), by test/fixtures/schema-1/make-db.mjs run against that build, with
 * its clock at T0 = 2026-01-10T12:00Z. It holds, for the resource {service.name=svc, service.instance.id=i-legacy,
 * host.name=host-1, telemetry.sdk.language=nodejs}, scope extscope 0.1.0:
 *
 * - extscope.requests, cumulative, client alpha 1.0 (plus custom.tag=x, outside the contract), started at
 *   T0 - 10 min: total 5 at T0 - 5 min, 8 at T0 - 4 min;
 * - extscope.extension.requests, cumulative, alpha 1.0, io.modelcontextprotocol/tasks declared by both, same
 *   start: 5, then 8;
 * - extscope.requests, delta, client gamma 1.0: 4 in (T0 - 3 min, T0 - 2 min].
 *
 * Every request point also carries server legacy-server 1.0.0, tools/call, era modern, declaration declared by
 * both sides, outcome complete.
 */
const FIXTURE = fileURLToPath(new URL('../../fixtures/schema-1/collector.db', import.meta.url));
const T0 = Date.UTC(2026, 0, 10, 12, 0);
const MINUTE = 60_000;
const TASKS = 'io.modelcontextprotocol/tasks';
const ns = (ms: number): string => String(BigInt(ms) * 1_000_000n);

const request = (client: string, extra: Json[] = []): Json[] => [
  attribute('extscope.server.name', 'legacy-server'),
  attribute('extscope.server.version', '1.0.0'),
  attribute('mcp.method.name', 'tools/call'),
  attribute('extscope.era', 'modern'),
  attribute('extscope.client.name', client),
  attribute('extscope.client.version', '1.0'),
  attribute('extscope.client.declaration', 'declared'),
  attribute('extscope.server.declaration', 'declared'),
  attribute('extscope.outcome', 'complete'),
  ...extra,
];
const alpha = (): Json[] => request('alpha', [attribute('custom.tag', 'x')]);
const alphaTasks = (): Json[] => [
  ...request('alpha'),
  attribute('extscope.extension.id', TASKS),
  attribute('extscope.extension.client_declared', true),
  attribute('extscope.extension.server_declared', true),
  attribute('extscope.extension.negotiated', true),
  attribute('extscope.extension.required', false),
];
const point = (attributes: Json[], startMs: number, timeMs: number, value: number): Json => ({
  attributes,
  startTimeUnixNano: ns(startMs),
  timeUnixNano: ns(timeMs),
  asInt: String(value),
});
const sum = (name: string, temporality: number, points: Json[]): Json => ({
  name,
  sum: { aggregationTemporality: temporality, isMonotonic: true, dataPoints: points },
});

function exportOf(metrics: Json[], attributeOrder: 'as-written' | 'reversed' = 'as-written'): Json {
  const resource = [
    attribute('service.name', 'svc'),
    attribute('service.instance.id', 'i-legacy'),
    attribute('host.name', 'host-1'),
    attribute('telemetry.sdk.language', 'nodejs'),
  ];
  if (attributeOrder === 'reversed') {
    resource.reverse();
    for (const metric of metrics) for (const p of (metric['sum'] as { dataPoints: { attributes: Json[] }[] }).dataPoints) p.attributes.reverse();
  }
  return { resourceMetrics: [{ resource: { attributes: resource }, scopeMetrics: [{ scope: { name: 'extscope', version: '0.1.0' }, metrics }] }] };
}

const START = T0 - 10 * MINUTE;

describe('a database written at schema version 1', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  beforeEach(async () => {
    temp = await tempDir();
  });
  afterEach(async () => {
    await temp.cleanup();
  });

  it('is migrated, and its cumulative and delta streams go on where they were: no double count, retries still recognised', async () => {
    const dbPath = join(temp.dir, 'upgraded.db');
    await copyFile(FIXTURE, dbPath);
    const collector = await startTestCollector(temp.dir, { dbPath, clock: () => T0 + MINUTE });
    const matrixNow = async (): Promise<MatrixJson> => {
      const { status, body } = await getJson<MatrixJson>(`${collector.url}/api/v1/matrix?from=${T0 - 60 * MINUTE}&to=${T0 + 60 * MINUTE}`);
      expect(status).toBe(200);
      return body;
    };
    const rows = async (): Promise<[string, number, number | undefined][]> =>
      (await matrixNow()).rows.map((row) => [row.client, row.requests, row.extensions.find((cell) => cell.id === TASKS)?.negotiated]);
    // By instance: from the instance cells, which the migration made from the stored series and their rollups.
    const byInstance = async (from: number): Promise<[string, number, number | undefined][]> => {
      const { status, body } = await getJson<MatrixJson>(`${collector.url}/api/v1/matrix?from=${from}&to=${T0 + 60 * MINUTE}&group=instance`);
      expect(status).toBe(200);
      return body.rows.map((row) => [row.client, row.requests, row.extensions.find((cell) => cell.id === TASKS)?.negotiated]);
    };
    try {
      // Before anything new: what the old version stored, by client and by instance (minutes, and whole days).
      expect(await rows()).toEqual([
        ['alpha', 8, 8],
        ['gamma', 4, 0],
      ]);
      expect(await byInstance(T0 - 60 * MINUTE)).toEqual([['svc / i-legacy', 12, 8]]);
      expect(await byInstance(T0 - 7 * 24 * 60 * MINUTE)).toEqual([['svc / i-legacy', 12, 8]]);

      // The same cumulative streams, same resource, attributes and start time (attributes in another order:
      // the stream is the same): the new total 11 adds 3, not 11.
      const next = exportOf(
        [
          sum('extscope.requests', CUMULATIVE, [point(alpha(), START, T0 - MINUTE, 11)]),
          sum('extscope.extension.requests', CUMULATIVE, [point(alphaTasks(), START, T0 - MINUTE, 11)]),
        ],
        'reversed',
      );
      const response = await postMetrics(collector.url, next);
      expect(response.status).toBe(200);
      expect(await rows()).toEqual([
        ['alpha', 11, 11],
        ['gamma', 4, 0],
      ]);

      // Retries of points the old version applied: the cumulative total 8 at T0 - 4 min, and the delta window.
      const oldCumulative = exportOf([sum('extscope.requests', CUMULATIVE, [point(alpha(), START, T0 - 4 * MINUTE, 8)])]);
      const oldDelta = exportOf([sum('extscope.requests', DELTA, [point(request('gamma'), T0 - 3 * MINUTE, T0 - 2 * MINUTE, 4)])]);
      for (const retry of [oldCumulative, oldDelta]) expect((await postMetrics(collector.url, retry, { format: 'json' })).status).toBe(200);
      expect(await rows()).toEqual([
        ['alpha', 11, 11],
        ['gamma', 4, 0],
      ]);
      expect(await byInstance(T0 - 7 * 24 * 60 * MINUTE)).toEqual([['svc / i-legacy', 15, 11]]);
      const exposition = await (await fetch(`${collector.url}/metrics`)).text();
      expect(exposition).toMatch(/extscope_collector_points_total\{result="applied"\} 2\n/);
      expect(exposition).toMatch(/extscope_collector_points_total\{result="duplicate"\} 2\n/);
    } finally {
      await collector.close();
    }

    const db = new Database(dbPath, { readonly: true });
    try {
      expect(db.prepare('SELECT max(version) AS v FROM schema_migrations').get()).toEqual({ v: loadMigrations(findMigrationsDir('sqlite')).at(-1)?.version });
      // The three streams were re-keyed in place: no new stream or series, history kept.
      expect(db.prepare('SELECT id, key_version FROM streams ORDER BY id').all()).toEqual([
        { id: 1, key_version: 2 },
        { id: 2, key_version: 2 },
        { id: 3, key_version: 2 },
      ]);
      expect(db.prepare('SELECT count(*) AS n FROM series').get()).toEqual({ n: 3 });
      // Two instance cells: the requests (both clients), and the extension id.
      expect(db.prepare('SELECT count(*) AS n FROM instance_cells').get()).toEqual({ n: 2 });
      expect(db.prepare('SELECT count(*) AS n FROM series WHERE instance_cell_id IS NULL').get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });
});
