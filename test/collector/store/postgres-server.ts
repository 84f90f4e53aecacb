/**
 * The PostgreSQL server the tests run against: 127.0.0.1:5432 with trust authentication (override with
 * EXTSCOPE_TEST_PG, a URL to its maintenance database). Each test run makes its own databases, with a unique
 * prefix, and drops them after. A server that cannot be reached fails the test, with the URL it tried.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const ADMIN_URL = process.env['EXTSCOPE_TEST_PG'] ?? 'postgres://root@127.0.0.1:5432/test';

export interface TestDatabases {
  /** A new empty database; returns its URL. */
  create(): Promise<string>;
  /** Drops every database made (connections still open to them are ended first). */
  dropAll(): Promise<void>;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(
      `PostgreSQL is needed for this test and was not reachable at ${ADMIN_URL} (${(error as Error).message}); set EXTSCOPE_TEST_PG to another server`,
    );
  }
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export function testDatabases(label: string): TestDatabases {
  const made: string[] = [];
  return {
    async create() {
      const name = `extscope_${label}_${process.pid}_${randomBytes(4).toString('hex')}`;
      await admin((client) => client.query(`CREATE DATABASE ${name}`));
      made.push(name);
      const url = new URL(ADMIN_URL);
      url.pathname = `/${name}`;
      return url.toString();
    },
    async dropAll() {
      const names = made.splice(0);
      if (names.length === 0) return;
      await admin(async (client) => {
        for (const name of names) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      });
    },
  };
}

/** A table's row updates in the transaction under way: how many, how many stayed on their page (HOT), its pages. */
export interface TableUpdates {
  table: string;
  updated: number;
  hot: number;
  pages: number;
}

/** What `tables` had updated so far in the client's open transaction, by table name. */
export async function updatesInTransaction(client: pg.ClientBase, tables: readonly string[]): Promise<TableUpdates[]> {
  const { rows } = await client.query<{ table: string; updated: string; hot: string; pages: number }>(
    `SELECT relname AS table, pg_stat_get_xact_tuples_updated(oid) AS updated, pg_stat_get_xact_tuples_hot_updated(oid) AS hot,
       (pg_relation_size(oid) / current_setting('block_size')::int)::int AS pages
     FROM pg_class WHERE relname = ANY($1::text[]) ORDER BY relname`,
    [tables],
  );
  return rows.map((row) => ({ table: row.table, updated: Number(row.updated), hot: Number(row.hot), pages: row.pages }));
}
