// CPU seconds of processes, from /proc (user + system, clock ticks at 100 per second): what a variant's collectors
// and database server spent, measured around the timed part of a run.
import { readFileSync, readdirSync } from 'node:fs';

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

/** CPU seconds of the given pids plus every PostgreSQL process, as a function that returns the spend since the call. */
export function cpuMeter(pids, withPostgres) {
  const read = () => {
    const own = pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    // Backends come and go: each one's total since it began counts, those gone are missed (the pool keeps them).
    const database = withPostgres ? new Map(postgresPids().map((pid) => [pid, cpuSeconds(pid)])) : new Map();
    return { own, database };
  };
  const start = read();
  return () => {
    const end = read();
    let database = 0;
    for (const [pid, seconds] of end.database) database += seconds - (start.database.get(pid) ?? 0);
    return { collectors: end.own - start.own, database, total: end.own - start.own + database };
  };
}
