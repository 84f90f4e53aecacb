import type pg from 'pg';
import { INSTANCE_CELL_TABLE_COLUMNS, INSTANCE_UPSERT_COLUMNS, MAX_STORED_COUNT, storedInstanceCellDims } from '../common/columns.js';
import { identityHash, instanceKey } from '../common/identity.js';
import { ROLLUP_LEVELS } from '../common/rollup-levels.js';
import { FOLDED_CLOCK_MS, FOLD_STEP, type SessionRow, endedSessionsRow, foldableSql, pairInstanceCells, sessionIdentity } from '../common/session-fold.js';
import { type Queryable, inTransaction } from './connection.js';
import { FOLD_LOCK } from './fold.js';

const INSTANCE_CELL_LEVELS = ROLLUP_LEVELS.filter((rollup) => rollup.owner === 'instance_cell');

/**
 * Folds up to {@link FOLD_STEP} ended sessions (ended before `cutoffMs`) into their build's "ended sessions" row, as
 * common/session-fold.ts decides, in one transaction; returns how many. The sessions and their build rows are locked
 * in key order, as exports lock instance rows (an export of one of them waits, then finds it folded: the writer's
 * instance limit sends it to the build row). The fold's lock is held too, from then to the commit (reads that carry
 * the fold wait that long, hence the small step): a fold of pending increments that read a series' instance cell
 * before it moved would add to a cell that is gone.
 */
export function foldSessions(pool: pg.Pool, now: number, cutoffMs: number): Promise<number> {
  return inTransaction(pool, async (db) => {
    const { rows: found } = await db.query<SessionRow>(`SELECT * FROM instances WHERE ${foldableSql('$1')} ORDER BY id LIMIT ${FOLD_STEP}`, [cutoffMs]);
    if (found.length === 0) return 0;
    const targets = new Map<number, { key: Buffer; values: (string | null)[] }>();
    for (const session of found) {
      const row = endedSessionsRow(sessionIdentity(session));
      targets.set(session.id, { key: identityHash(instanceKey(row.identity)), values: row.values });
    }
    // The build rows, created where missing: each takes the place of the sessions it holds (the limit counts rows).
    const columns = INSTANCE_UPSERT_COLUMNS;
    for (const session of found) {
      const target = targets.get(session.id) as { key: Buffer; values: (string | null)[] };
      await db.query(
        `INSERT INTO instances (key_hash, ${columns.join(', ')}, first_seen_ms, last_seen_ms, ended_ms, clock_ms, ended_sessions)
         VALUES ($1, ${columns.map((_column, index) => `$${index + 2}`).join(', ')}, $${columns.length + 2}, $${columns.length + 3}, $${columns.length + 4}, ${FOLDED_CLOCK_MS}, 0)
         ON CONFLICT (key_hash) DO NOTHING`,
        [target.key, ...target.values, session.first_seen_ms, session.last_seen_ms, session.ended_ms ?? session.last_seen_ms],
      );
    }
    // Locked in key order; a session an export ran again meanwhile is no longer foldable and is left out.
    const { rows: locked } = await db.query<SessionRow & { foldable: boolean }>(
      `SELECT *, id = ANY($1::bigint[]) AS foldable FROM instances
       WHERE (id = ANY($1::bigint[]) AND ${foldableSql('$3')}) OR key_hash = ANY($2::bytea[]) ORDER BY key_hash FOR UPDATE`,
      [found.map((session) => session.id), [...targets.values()].map((target) => target.key), cutoffMs],
    );
    // After the rows (an export holding one never waits for the fold's lock, so neither waits for the other in turn).
    await db.query(`SELECT pg_advisory_xact_lock(${FOLD_LOCK})`);
    const idByKey = new Map(locked.map((row) => [row.key_hash.toString('hex'), row.id]));
    let folded = 0;
    for (const session of locked) {
      if (!session.foldable) continue;
      const to = idByKey.get((targets.get(session.id) as { key: Buffer }).key.toString('hex')) as number;
      await foldOne(db, session, to, now);
      folded++;
    }
    return folded;
  });
}

async function foldOne(db: Queryable, session: SessionRow, to: number, now: number): Promise<void> {
  const cells = async (instanceRef: number): Promise<[number, ReturnType<typeof storedInstanceCellDims>][]> => {
    const { rows } = await db.query<Record<string, unknown>>(
      `SELECT id, kind, ${INSTANCE_CELL_TABLE_COLUMNS.map((column) => column.column).join(', ')} FROM instance_cells WHERE instance_ref = $1`,
      [instanceRef],
    );
    return rows.map((cell) => [Number(cell['id']), storedInstanceCellDims(cell)]);
  };
  const { merge, move } = pairInstanceCells(await cells(session.id), await cells(to));
  if (merge.length > 0) {
    const from = merge.map(([source]) => source);
    const into = merge.map(([, target]) => target);
    for (const rollup of INSTANCE_CELL_LEVELS) {
      await db.query(
        `INSERT INTO ${rollup.table} AS r (${rollup.ownerColumn}, ${rollup.bucket}, count)
         SELECT m.target, l.${rollup.bucket}, l.count FROM unnest($1::bigint[], $2::bigint[]) AS m (source, target)
         JOIN ${rollup.table} l ON l.${rollup.ownerColumn} = m.source ORDER BY 1, 2
         ON CONFLICT (${rollup.ownerColumn}, ${rollup.bucket}) DO UPDATE SET count = LEAST(r.count + excluded.count, ${MAX_STORED_COUNT})`,
        [from, into],
      );
      await db.query(`DELETE FROM ${rollup.table} WHERE ${rollup.ownerColumn} = ANY($1::bigint[])`, [from]);
    }
    await db.query(
      `UPDATE series s SET instance_cell_id = m.target FROM unnest($1::bigint[], $2::bigint[]) AS m (source, target)
       WHERE s.instance_ref = $3 AND s.instance_cell_id = m.source`,
      [from, into, session.id],
    );
    await db.query('DELETE FROM instance_cells WHERE id = ANY($1::bigint[])', [from]);
  }
  if (move.length > 0) await db.query('UPDATE instance_cells SET instance_ref = $1 WHERE id = ANY($2::bigint[])', [to, move]);
  // Keyed by their own id from now on, as the SQLite store does (a series is found by its stream, or by its key under its instance).
  await db.query("UPDATE series SET instance_ref = $1, key_hash = convert_to('folded series ' || id, 'UTF8') WHERE instance_ref = $2", [to, session.id]);
  await db.query('DELETE FROM advertised WHERE instance_ref = $1', [session.id]);
  await db.query('DELETE FROM advertised_counts WHERE instance_ref = $1', [session.id]);
  await db.query(
    `UPDATE instances SET first_seen_ms = LEAST(first_seen_ms, $2), last_seen_ms = GREATEST(last_seen_ms, $3),
       ended_ms = GREATEST(coalesce(ended_ms, 0), $4), ended_sessions = ended_sessions + 1 WHERE id = $1`,
    [to, session.first_seen_ms, session.last_seen_ms, session.ended_ms ?? session.last_seen_ms],
  );
  await db.query(
    `INSERT INTO folded_instances (key_hash, target_ref, clock_ms, folded_ms) VALUES ($1, $2, $3, $4)
     ON CONFLICT (key_hash) DO UPDATE SET target_ref = excluded.target_ref, clock_ms = excluded.clock_ms, folded_ms = excluded.folded_ms`,
    [session.key_hash, to, session.clock_ms, now],
  );
  await db.query('DELETE FROM instances WHERE id = $1', [session.id]);
}
