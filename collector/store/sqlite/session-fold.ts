import type Database from 'better-sqlite3';
import { INSTANCE_CELL_TABLE_COLUMNS, INSTANCE_UPSERT_COLUMNS, MAX_STORED_COUNT, storedInstanceCellDims } from '../common/columns.js';
import { identityHash, instanceKey } from '../common/identity.js';
import { ROLLUP_LEVELS } from '../common/rollup-levels.js';
import { FOLDED_CLOCK_MS, FOLD_STEP, type SessionRow, endedSessionsRow, foldableSql, pairInstanceCells, sessionIdentity } from '../common/session-fold.js';

/** Folds ended sessions into their build's "ended sessions" row, as common/session-fold.ts decides, a step at a time. */
export class SessionFold {
  private readonly statements;
  private readonly levels: { add: Database.Statement; drop: Database.Statement }[];
  private readonly step: (now: number, cutoff: number) => number;

  constructor(db: Database.Database) {
    const columns = INSTANCE_UPSERT_COLUMNS;
    this.statements = {
      foldable: db.prepare(`SELECT * FROM instances WHERE ${foldableSql('@cutoff')} ORDER BY id LIMIT ${FOLD_STEP}`),
      target: db.prepare('SELECT id FROM instances WHERE key_hash = ?').pluck(),
      createTarget: db
        .prepare(
          `
        INSERT INTO instances (key_hash, ${columns.join(', ')}, first_seen_ms, last_seen_ms, ended_ms, clock_ms, ended_sessions)
        VALUES (?, ${columns.map(() => '?').join(', ')}, @first, @last, @ended, ${FOLDED_CLOCK_MS}, 0) RETURNING id`,
        )
        .pluck(),
      cells: db.prepare(`SELECT id, kind, ${INSTANCE_CELL_TABLE_COLUMNS.map((column) => column.column).join(', ')} FROM instance_cells WHERE instance_ref = ?`),
      repointSeriesCell: db.prepare('UPDATE series SET instance_cell_id = @to WHERE instance_ref = @session AND instance_cell_id = @from'),
      dropCell: db.prepare('DELETE FROM instance_cells WHERE id = ?'),
      moveCell: db.prepare('UPDATE instance_cells SET instance_ref = @to WHERE id = @from'),
      // Keyed by their own id from now on: the session's id may be taken again by a new instance (SQLite reuses the
      // highest rowid), whose series must not find these.
      moveSeries: db.prepare("UPDATE series SET instance_ref = @to, key_hash = CAST('folded series ' || id AS BLOB) WHERE instance_ref = @session"),
      dropAdvertised: db.prepare('DELETE FROM advertised WHERE instance_ref = ?'),
      dropCounts: db.prepare('DELETE FROM advertised_counts WHERE instance_ref = ?'),
      updateTarget: db.prepare(`
        UPDATE instances SET first_seen_ms = min(first_seen_ms, @first), last_seen_ms = max(last_seen_ms, @last),
          ended_ms = max(coalesce(ended_ms, 0), @ended), ended_sessions = ended_sessions + 1 WHERE id = @to`),
      note: db.prepare(`
        INSERT INTO folded_instances (key_hash, target_ref, clock_ms, folded_ms) VALUES (?, ?, ?, ?)
        ON CONFLICT (key_hash) DO UPDATE SET target_ref = excluded.target_ref, clock_ms = excluded.clock_ms, folded_ms = excluded.folded_ms`),
      dropSession: db.prepare('DELETE FROM instances WHERE id = ?'),
    };
    this.levels = ROLLUP_LEVELS.filter((rollup) => rollup.owner === 'instance_cell').map((rollup) => ({
      // The WHERE clause also keeps SQLite from reading ON CONFLICT as a join constraint of the SELECT.
      add: db.prepare(`
        INSERT INTO ${rollup.table} (${rollup.ownerColumn}, ${rollup.bucket}, count)
        SELECT @to, ${rollup.bucket}, count FROM ${rollup.table} WHERE ${rollup.ownerColumn} = @from
        ON CONFLICT (${rollup.ownerColumn}, ${rollup.bucket}) DO UPDATE SET count = min(count + excluded.count, ${MAX_STORED_COUNT})`),
      drop: db.prepare(`DELETE FROM ${rollup.table} WHERE ${rollup.ownerColumn} = ?`),
    }));
    this.step = db.transaction((now: number, cutoff: number) => {
      const sessions = this.statements.foldable.all({ cutoff }) as SessionRow[];
      for (const session of sessions) this.foldOne(session, now);
      return sessions.length;
    });
  }

  /** Folds up to {@link FOLD_STEP} sessions that ended before `cutoff` in one transaction; returns how many. */
  foldStep(now: number, cutoff: number): number {
    return this.step(now, cutoff);
  }

  private foldOne(session: SessionRow, now: number): void {
    const s = this.statements;
    const identity = sessionIdentity(session);
    const row = endedSessionsRow(identity);
    const times = { first: session.first_seen_ms, last: session.last_seen_ms, ended: session.ended_ms ?? session.last_seen_ms };
    const key = identityHash(instanceKey(row.identity));
    const to = (s.target.get(key) as number | undefined) ?? (s.createTarget.get(key, ...row.values, times) as number);
    const cells = (instanceRef: number): [number, ReturnType<typeof storedInstanceCellDims>][] =>
      (s.cells.all(instanceRef) as Record<string, unknown>[]).map((cell) => [cell['id'] as number, storedInstanceCellDims(cell)]);
    const { merge, move } = pairInstanceCells(cells(session.id), cells(to));
    for (const [from, into] of merge) {
      for (const level of this.levels) {
        level.add.run({ from, to: into });
        level.drop.run(from);
      }
      s.repointSeriesCell.run({ from, to: into, session: session.id });
      s.dropCell.run(from);
    }
    for (const from of move) s.moveCell.run({ from, to });
    s.moveSeries.run({ to, session: session.id });
    s.dropAdvertised.run(session.id);
    s.dropCounts.run(session.id);
    s.updateTarget.run({ ...times, to });
    s.note.run(session.key_hash, to, session.clock_ms, now);
    s.dropSession.run(session.id);
  }
}
