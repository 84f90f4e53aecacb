import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { BatchedTransaction } from '../../../collector/store/postgres/connection.js';
import { openPostgresStore } from '../../../collector/store/postgres/index.js';
import type { KnownStream } from '../../../collector/store/postgres/writer/known-streams.js';
import { loadExport } from '../../../collector/store/postgres/writer/load.js';
import { testDatabases } from './postgres-server.js';

const databases = testDatabases('load');
const T0 = Date.UTC(2026, 2, 2, 10, 0);
const STREAMS = 50;

describe('PostgreSQL export load', () => {
  const pools: pg.Pool[] = [];
  afterAll(async () => {
    await Promise.all(pools.map((pool) => pool.end()));
    await databases.dropAll();
  });

  it('a stream that names the series the collector knows for it is loaded from what the collector knows of that series, not read again: a series row changed after the first load does not show in the second; a stream naming another series is read', async () => {
    const url = await databases.create();
    await (await openPostgresStore({ url, clock: () => T0, retention: { minuteDays: 2, hourDays: 10, dedupHours: 6 }, examplesPerCell: 1 })).lifecycle.close();
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    pools.push(pool);
    // One instance's streams, each of its own series, cell (and all-services cell) and client version.
    await pool.query(`INSERT INTO instances (id, key_hash, first_seen_ms, last_seen_ms) VALUES (1, int8send(1), $1, $1)`, [T0]);
    await pool.query(`INSERT INTO cells (id, key_hash, scope, kind) SELECT g, int8send(g), (g > ${STREAMS})::int, 0 FROM generate_series(1, ${2 * STREAMS}) g`);
    await pool.query(
      `INSERT INTO series (id, key_hash, instance_ref, cell_id, all_cell_id, kind, client_name, client_version)
       SELECT g, int8send(g), 1, g, ${STREAMS} + g, 0, 'client', '1.' || g FROM generate_series(1, ${STREAMS}) g`,
    );
    await pool.query(
      `INSERT INTO streams (id, key_hash, series_id, temporality, key_version) SELECT 100 + g, int8send(100 + g), g, 1, 2 FROM generate_series(1, ${STREAMS}) g`,
    );
    const streams: KnownStream[] = Array.from({ length: STREAMS }, (_unused, index) => {
      const hash = Buffer.alloc(8);
      hash.writeBigInt64BE(BigInt(101 + index));
      return { hash, hex: hash.toString('hex'), stored: undefined };
    });
    const instance = Buffer.alloc(8);
    instance.writeBigInt64BE(1n);
    /** One export's load, in a transaction of its own: each stream's ids, cells and client version as it found them. */
    const load = async (): Promise<[number, number, number, number, string][]> => {
      const client = await pool.connect();
      try {
        const loaded = await loadExport(new BatchedTransaction(client), [instance], streams, []);
        await client.query('ROLLBACK');
        return streams.map((stream) => {
          const ref = loaded.streams.get(stream.hex);
          return [ref?.streamId ?? 0, ref?.seriesId ?? 0, ref?.cellId ?? 0, ref?.allCellId ?? 0, String(ref?.dims.clientVersion)];
        });
      } finally {
        client.release();
      }
    };
    const expected = streams.map((_stream, index): [number, number, number, number, string] => [
      101 + index,
      index + 1,
      index + 1,
      STREAMS + index + 1,
      `1.${index + 1}`,
    ]);
    expect(await load()).toEqual(expected);
    // The series rows changed behind the collector's back (nothing does this: a series' cells and dimensions are its
    // identity), so that an answer from them shows: the next load answers what the collector knows.
    await pool.query(`UPDATE series SET cell_id = all_cell_id, all_cell_id = cell_id, client_version = 'changed'`);
    expect(await load()).toEqual(expected);
    // A stream whose series the database names differently now (another series took its key): read again.
    await pool.query(
      `INSERT INTO series (id, key_hash, instance_ref, cell_id, all_cell_id, kind, client_name, client_version) VALUES (999, int8send(999), 1, 7, 8, 0, 'client', '9.9')`,
    );
    await pool.query('UPDATE streams SET series_id = 999 WHERE id = 101');
    const third = await load();
    expect(third[0]).toEqual([101, 999, 7, 8, '9.9']);
    expect(third.slice(1)).toEqual(expected.slice(1));
  });
});
