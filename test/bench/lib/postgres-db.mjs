// A PostgreSQL database for one benchmark run, emptied or dropped afterwards.
// BENCH_PG_DATABASE: a database the benchmark may empty and use (its public schema is dropped and made anew before
// and after each use), for a machine where a run may touch only its own database. Otherwise BENCH_PG: the
// maintenance database's URL (default postgres://root@127.0.0.1:5432/test, trust authentication), where each use
// creates a fresh database and drops it afterwards.
import pg from 'pg';

const OWN_URL = process.env.BENCH_PG_DATABASE;
const ADMIN_URL = process.env.BENCH_PG ?? 'postgres://root@127.0.0.1:5432/test';

async function run(url, sql) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function createBenchDatabase(label) {
  if (OWN_URL !== undefined) {
    const empty = () => run(OWN_URL, 'DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public');
    await empty();
    return { url: OWN_URL, name: new URL(OWN_URL).pathname.slice(1), drop: empty };
  }
  const name = `extscope_bench_${label}_${process.pid}_${Date.now().toString(36)}`;
  await run(ADMIN_URL, `CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), name, drop: () => run(ADMIN_URL, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

export { pg };
