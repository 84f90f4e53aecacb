// A fresh PostgreSQL database for one benchmark run, dropped afterwards. BENCH_PG: the maintenance database's URL
// (default postgres://root@127.0.0.1:5432/test, trust authentication as on this project's machines).
import pg from 'pg';

const ADMIN_URL = process.env.BENCH_PG ?? 'postgres://root@127.0.0.1:5432/test';

async function admin(sql) {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function createBenchDatabase(label) {
  const name = `extscope_bench_${label}_${process.pid}_${Date.now().toString(36)}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), name, drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

export { pg };
