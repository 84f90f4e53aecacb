// What PostgreSQL's backends of one database wait on, sampled from pg_stat_activity (as pg_wait_sampling does): every
// `intervalMs` one query counts the active backends of the database by wait event. PostgreSQL keeps no running total
// of time spent waiting on locks, so the sampled count × the interval estimates it: the seconds backends spent waiting
// on heavyweight locks (row, transaction, advisory) and on lightweight ones (buffer content, WAL insertion), and the
// seconds they were active without waiting (on a core, or ready for one). A fold waiting for another replica's fold
// (the advisory lock, which a read takes to see every acknowledged export) is counted apart from exports' waits.
import pg from 'pg';

export function sampleWaits(url, database, intervalMs = 20) {
  const client = new pg.Client({ connectionString: url, application_name: 'extscope-bench-sampler' });
  const seconds = { active: 0, lock: 0, foldLock: 0, lwlock: 0, io: 0 };
  /** Sampled backend-seconds per `type:event` of the lock waits (heavyweight and lightweight). */
  const byEvent = new Map();
  let stopped = false;
  let samples = 0;
  const sampling = (async () => {
    await client.connect();
    let last = performance.now();
    while (!stopped) {
      const { rows } = await client.query(
        `SELECT wait_event_type AS type, wait_event AS event, query LIKE '%pg_advisory_xact_lock%' AS fold, count(*)::int AS n FROM pg_stat_activity
         WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid() GROUP BY 1, 2, 3`,
        [database],
      );
      const now = performance.now();
      // Each sample stands for the time since the previous one (the query itself takes some of it).
      const weight = (now - last) / 1000;
      last = now;
      samples++;
      for (const row of rows) {
        const part =
          row.type === 'Lock'
            ? row.fold
              ? 'foldLock'
              : 'lock'
            : row.type === 'LWLock'
              ? 'lwlock'
              : row.type === 'IO'
                ? 'io'
                : row.type === null
                  ? 'active'
                  : undefined;
        if (part === undefined) continue;
        seconds[part] += row.n * weight;
        if (part === 'lock' || part === 'lwlock') byEvent.set(`${row.type}:${row.event}`, (byEvent.get(`${row.type}:${row.event}`) ?? 0) + row.n * weight);
      }
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return async () => {
    stopped = true;
    await sampling;
    await client.end();
    return { samples, seconds, byEvent: Object.fromEntries([...byEvent].sort((a, b) => b[1] - a[1])) };
  };
}
