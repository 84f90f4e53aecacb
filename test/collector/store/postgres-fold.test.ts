import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { MS_PER_MINUTE } from '../../../collector/model/time.js';
import { FoldSchedule } from '../../../collector/store/common/fold-schedule.js';
import { PostgresFolder } from '../../../collector/store/postgres/fold.js';
import { openPostgresStore } from '../../../collector/store/postgres/index.js';
import { testDatabases } from './postgres-server.js';

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
});
