import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { AdvertisementPlan } from '../../../collector/store/common/advertisement-plan.js';
import { openPostgresStore } from '../../../collector/store/postgres/index.js';
import { type InstanceWrite, writeStatement } from '../../../collector/store/postgres/writer/write.js';
import { testDatabases, updatesInTransaction } from './postgres-server.js';

const databases = testDatabases('write');
const T0 = Date.UTC(2026, 2, 2, 10, 0);
/** Instances stored, each advertising this many extensions: several pages of each table the write updates in place. */
const INSTANCES = 400;
const EXTENSIONS = 4;

/** Instance `id`'s write at `atMs`: what it advertises seen again, its count changed (a new generation). */
function instanceWrite(id: number, atMs: number, generation: number): InstanceWrite {
  const advertisements: AdvertisementPlan = {
    instance: { advertisedMs: atMs, generation },
    advertised: Array.from({ length: EXTENSIONS }, (_unused, index) => ['server', '1.0', `io.example/ext-${index}`, `f${index}`, T0, atMs, generation]),
    counts: [['server', '1.0', EXTENSIONS + generation, T0, atMs, generation]],
  };
  return { id, values: {}, ending: { endedMs: null, clockMs: atMs }, advertisements };
}

/** Rows read from `table` by scans in the current transaction (sequential and through its indexes). */
const READ = `SELECT pg_stat_get_xact_tuples_returned(c.oid) + pg_stat_get_xact_tuples_fetched(c.oid) AS n FROM pg_class c WHERE c.relname = $1`;

describe('PostgreSQL export write', () => {
  const clients: pg.Client[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.end()));
    await databases.dropAll();
  });

  const seeded = async (): Promise<pg.Client> => {
    const url = await databases.create();
    await (await openPostgresStore({ url, clock: () => T0, retention: { minuteDays: 2, hourDays: 10, dedupHours: 6 }, examplesPerCell: 1 })).lifecycle.close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    clients.push(client);
    // Rows as an export leaves them (its resource's names, its clock, its advertising), a few hundred bytes each.
    await client.query(
      `INSERT INTO instances (id, key_hash, service, instance_id, service_version, host, server_name, server_version, build_key,
         first_seen_ms, last_seen_ms, advertised_ms, advertise_gen, clock_ms)
       SELECT g, int8send(g), 'service-' || (g % 20), 'instance-' || md5(g::text), '2.3.1', 'host-' || md5(g::text), 'server', '1.0',
         'build-' || md5((g % 20)::text), $1, $1, $1, 1, $1
       FROM generate_series(1, ${INSTANCES}) g`,
      [T0],
    );
    await client.query(
      `INSERT INTO advertised (instance_ref, server_name, server_version, extension_id, fingerprint, first_seen_ms, last_seen_ms, last_gen)
       SELECT g, 'server', '1.0', 'io.example/ext-' || e, 'f' || e, $1, $1, 1 FROM generate_series(1, ${INSTANCES}) g, generate_series(0, ${EXTENSIONS - 1}) e`,
      [T0],
    );
    await client.query(
      `INSERT INTO advertised_counts (instance_ref, server_name, server_version, count, first_seen_ms, last_seen_ms, last_gen)
       SELECT g, 'server', '1.0', ${EXTENSIONS}, $1, $1, 1 FROM generate_series(1, ${INSTANCES}) g`,
      [T0],
    );
    return client;
  };

  it("one instance's write reads that instance's row alone, with the plan PostgreSQL keeps for the prepared statement (a generic one), among 400 instances", async () => {
    const client = await seeded();
    await client.query('BEGIN');
    await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
    const { rows: before } = await client.query<{ n: string }>(READ, ['instances']);
    await client.query(writeStatement(T0 + 60_000, [], [instanceWrite(7, T0 + 60_000, 2)], []));
    const { rows: after } = await client.query<{ n: string }>(READ, ['instances']);
    const { rows: written } = await client.query<{ last_seen_ms: string; advertise_gen: string }>(
      'SELECT last_seen_ms, advertise_gen FROM instances WHERE id = 7',
    );
    await client.query('ROLLBACK');
    expect(Number(after[0]?.n) - Number(before[0]?.n)).toBe(1);
    expect(written.map((row) => [Number(row.last_seen_ms), Number(row.advertise_gen)])).toEqual([[T0 + 60_000, 2]]);
  });

  it('the rows every export updates in place take their new versions on their own pages: a write of all 400 instances updates every instance, advertised and count row heap-only, several pages of each', async () => {
    const client = await seeded();
    const tables = ['advertised', 'advertised_counts', 'instances'];
    const rowsOf: Record<string, number> = { advertised: INSTANCES * EXTENSIONS, advertised_counts: INSTANCES, instances: INSTANCES };
    await client.query('BEGIN');
    await client.query(
      writeStatement(
        T0 + 60_000,
        [],
        Array.from({ length: INSTANCES }, (_unused, index) => instanceWrite(index + 1, T0 + 60_000, 2)),
        [],
      ),
    );
    const rows = await updatesInTransaction(client, tables);
    await client.query('COMMIT');
    expect(rows.map((row) => [row.table, row.updated, row.hot])).toEqual(tables.map((table) => [table, rowsOf[table], rowsOf[table]]));
    for (const row of rows) expect(row.pages, row.table).toBeGreaterThanOrEqual(2);
  });
});
