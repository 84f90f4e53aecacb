// BENCH_PIN=1: the database server on one core and everything else (the collectors, this process's senders) on the
// other, with taskset, so that a run shows what each side uses of a core of its own. PostgreSQL's backends are forked
// by the postmaster, and the collectors by this process: each inherits its parent's affinity. The pinning is undone
// when the run ends, so the server is left as found.
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { postgresPids } from './proc-cpu.mjs';

export const PINNED = process.env.BENCH_PIN === '1';
const DATABASE_CPU = '0';
const OTHERS_CPU = '1';

const setAffinity = (pid, cpus) => execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });

/** Pins the database to its core and this process to the other; returns what undoes it. */
export function pinApart() {
  if (availableParallelism() < 2) throw new Error('BENCH_PIN=1 needs two cores');
  const all = `0-${availableParallelism() - 1}`;
  const pids = postgresPids();
  if (pids.length === 0) throw new Error('BENCH_PIN=1: no PostgreSQL process found to pin');
  for (const pid of pids) setAffinity(pid, DATABASE_CPU);
  setAffinity(process.pid, OTHERS_CPU);
  return () => {
    for (const pid of postgresPids()) {
      try {
        setAffinity(pid, all);
      } catch {
        // A backend that ended meanwhile.
      }
    }
    setAffinity(process.pid, all);
  };
}
