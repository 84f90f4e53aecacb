// CPU seconds of processes, from /proc (user + system, clock ticks at 100 per second): what a variant's collectors
// and database server spent, measured around the timed part of a run.
import { readFileSync, readdirSync } from 'node:fs';
import pg from 'pg';

const TICKS_PER_SECOND = 100;

/** User + system CPU seconds of one process so far; 0 once it is gone. */
export function cpuSeconds(pid) {
  try {
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** The pids of the PostgreSQL server's processes (the postmaster and every backend), by their command name. */
export function postgresPids() {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/**
 * The pids of one database's backends and of its server's own processes (WAL writer, checkpointer, …: they serve
 * every database), as the server lists them: other databases' backends on a shared server are not counted.
 */
async function databasePids(client, database) {
  const { rows } = await client.query('SELECT pid FROM pg_stat_activity WHERE (datname = $1 OR datname IS NULL) AND pid <> pg_backend_pid()', [database]);
  return rows.map((row) => row.pid);
}

/**
 * CPU seconds of the given pids plus, with `postgres` ({ url, database }), the database's backends and its server's
 * own processes (not other databases' backends), as a function that resolves to the spend since the call.
 */
export async function cpuMeter(pids, postgres) {
  const client = postgres === undefined ? undefined : new pg.Client({ connectionString: postgres.url });
  await client?.connect();
  const read = async () => {
    const own = pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    // Backends come and go: each one's total since it began counts, those gone are missed (the pool keeps them).
    const database = client === undefined ? new Map() : new Map((await databasePids(client, postgres.database)).map((pid) => [pid, cpuSeconds(pid)]));
    return { own, database };
  };
  const start = await read();
  return async () => {
    const end = await read();
    await client?.end();
    let database = 0;
    for (const [pid, seconds] of end.database) database += seconds - (start.database.get(pid) ?? 0);
    return { collectors: end.own - start.own, database, total: end.own - start.own + database };
  };
}
