import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { MS_PER_MINUTE } from '../../../collector/model/time.js';
import { FoldSchedule } from '../../../collector/store/common/fold-schedule.js';
import { FOLD_BEFORE_READ, PostgresFolder } from '../../../collector/store/postgres/fold.js';
import { ROLLUP_LEVELS } from '../../../collector/store/common/rollup-levels.js';
import { openPostgresStore } from '../../../collector/store/postgres/index.js';
import { testDatabases, updatesInTransaction } from './postgres-server.js';

const databases = testDatabases('fold');
const T0 = Date.UTC(2026, 2, 2, 10, 0);
const FOLD_LOCK = "hashtextextended('extscope:fold', 0)";

describe('PostgreSQL pending fold between replicas', () => {
  const pools: pg.Pool[] = [];
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
    await databases.dropAll();
  });

  it('while another replica folds, the scheduled fold leaves the rows to it, and a read-time fold waits for it and then folds them', async () => {
    const url = await databases.create();
    // The schema, as a collector makes it.
    await (await openPostgresStore({ url, clock: () => T0, retention: { minuteDays: 2, hourDays: 10, dedupHours: 6 }, examplesPerCell: 1 })).lifecycle.close();
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    // The database is dropped WITH (FORCE) after pool.end(): a connection still closing then is terminated, which
    // the pool reports as an error; teardown, not the fold under test.
    pool.on('error', () => undefined);
    pools.push(pool);
    await pool.query('INSERT INTO pending_increments (minute, series_id, cell_id, all_cell_id, value) VALUES ($1, 1, 2, 3, 5)', [T0 / MS_PER_MINUTE]);
    const pending = async (): Promise<number> => Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM pending_increments')).rows[0]?.n);
    // Another replica folding: it holds the fold lock.
    const other = await pool.connect();
    await other.query('BEGIN');
    await other.query(`SELECT pg_advisory_xact_lock(${FOLD_LOCK})`);
    const folder = new PostgresFolder(pool);
    await folder.foldPending({ wait: false, recentlyFailed: false });
    expect(await pending()).toBe(1);
    let read = false;
    const reading = new FoldSchedule(folder, () => undefined, undefined).fold().then(() => (read = true));
    // Still waiting for the lock a while later; the row untouched.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(read).toBe(false);
    expect(await pending()).toBe(1);
    await other.query('COMMIT');
    other.release();
    await reading;
    expect(await pending()).toBe(0);
    const { rows } = await pool.query<{ count: string }>('SELECT count FROM cell_minute WHERE cell_id = 2');
    expect(rows.map((row) => Number(row.count))).toEqual([5]);
  });

  it('a fold adds to the rollup rows it updates in place, on their pages: a second fold into the same buckets updates every hour, day and cell minute row heap-only, several pages of each', async () => {
    const url = await databases.create();
    await (await openPostgresStore({ url, clock: () => T0, retention: { minuteDays: 2, hourDays: 10, dedupHours: 6 }, examplesPerCell: 1 })).lifecycle.close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      // N series, each of its own instance, cell (and all-services cell) and instance cell: 2N cell rows and N rows of
      // each other level per bucket, a few hundred bytes short of ten pages of cell rows when pages are packed.
      const n = 400;
      await client.query(`INSERT INTO instances (id, key_hash, first_seen_ms, last_seen_ms) SELECT g, int8send(g), 0, 0 FROM generate_series(1, ${n}) g`);
      await client.query(`INSERT INTO cells (id, key_hash, scope, kind) SELECT g, int8send(g), (g > ${n})::int, 0 FROM generate_series(1, ${2 * n}) g`);
      await client.query(`INSERT INTO instance_cells (id, instance_ref, kind) SELECT g, g, 0 FROM generate_series(1, ${n}) g`);
      await client.query(
        `INSERT INTO series (id, key_hash, instance_ref, cell_id, all_cell_id, instance_cell_id, kind) SELECT g, int8send(g), g, g, ${n} + g, g, 0 FROM generate_series(1, ${n}) g`,
      );
      const pend = (): Promise<unknown> =>
        client.query(
          `INSERT INTO pending_increments (minute, series_id, cell_id, all_cell_id, value) SELECT $1::bigint, g, g, ${n} + g, 1 FROM generate_series(1, ${n}) g`,
          [T0 / MS_PER_MINUTE],
        );
      await pend();
      await client.query(FOLD_BEFORE_READ.text);
      await pend();
      // The second fold in a transaction of its own: what it updated, and how, read before it ends.
      await client.query('BEGIN');
      const { rows: folded } = await client.query<{ moved: number }>(FOLD_BEFORE_READ.text);
      const updated = ROLLUP_LEVELS.filter((level) => !(level.owner === 'series' && level.bucket === 'minute')).map((level) => level.table);
      const rows = await updatesInTransaction(client, updated);
      await client.query('COMMIT');
      expect(folded[0]?.moved).toBe(n);
      const rowsOf = (table: string): number => (table.startsWith('cell_') ? 2 * n : n);
      expect(rows.map((row) => [row.table, row.updated, row.hot])).toEqual([...updated].sort().map((table) => [table, rowsOf(table), rowsOf(table)]));
      for (const row of rows) expect(row.pages, row.table).toBeGreaterThanOrEqual(3);
    } finally {
      await client.end();
    }
  });
});
