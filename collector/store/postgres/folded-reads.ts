import type pg from 'pg';
import type { ReadFold } from '../common/fold-first-reader.js';
import type { FoldSchedule } from '../common/fold-schedule.js';
import { type Statement, type StatementRunner, led } from './connection.js';
import { FOLD_BEFORE_READ, PENDING_BEFORE_READ, foldLeftMore } from './fold.js';

/**
 * The rollup reads' statements, each with the fold before it in the same round trip (connection.ts `led`): the fold
 * commits first, so the statement sees every export acknowledged before it began, on any replica, and a read costs
 * no round trip of its own to look for pending increments. When the fold schedule is behind (a fold failed a moment
 * ago), the statement is sent alone: the reader folds first through the schedule, which then waits for locks only
 * briefly (fold-first-reader.ts). A fold that fails here does not fail the read: the statement is sent again alone
 * and answers from what is folded, and the schedule reports it behind.
 *
 * While the last look found nothing pending (no export since), a statement goes behind a look for pending increments
 * instead of the fold: the fold statement, even with nothing to move, opens every rollup table it could write (about
 * 1 ms of the database's time), several times the statements of a small read. When the look finds increments pending,
 * they are folded through the schedule and the statement is sent again, and the next statements carry the fold
 * again, as long as exports keep coming. Either way the statement sees every export acknowledged before it began.
 */
export class FoldedReads implements StatementRunner {
  constructor(
    private readonly pool: pg.Pool,
    private readonly schedule: FoldSchedule,
  ) {}

  /** What the fold-first reader folds through: only when the schedule is behind (otherwise every statement folds). */
  readonly readFold: ReadFold = {
    beforeRead: (): Promise<void> => (this.schedule.failed ? this.schedule.beforeRead() : Promise.resolve()),
    behind: (): boolean => this.schedule.failed,
  };

  /** Whether increments were found pending since a statement last found none: the statements carry the fold. */
  private pendingSeen = true;
  /** When increments were last folded here: a statement sent before that which found none says nothing of after. */
  private foldedAtMs = Number.NEGATIVE_INFINITY;

  async query(statement: Statement): Promise<{ rows: unknown[] }> {
    if (this.schedule.failed) return this.pool.query(statement);
    const sentAtMs = performance.now();
    const folds = this.pendingSeen;
    const client = await this.pool.connect();
    let answer: { ahead: Record<string, unknown>[]; rows: unknown[] };
    try {
      answer = await led(client, folds ? FOLD_BEFORE_READ : PENDING_BEFORE_READ, statement);
      client.release();
    } catch (error) {
      // Discarded: which statements ran, and whether a transaction is open, is the failure's to say.
      client.release(error as Error);
      if ((error as { aheadCommitted?: boolean }).aheadCommitted === true) throw error;
      if (!folds) throw error;
      this.schedule.readFoldFailed(error);
      return this.pool.query(statement);
    }
    const ahead = answer.ahead[0];
    if (folds) {
      const moved = Number(ahead?.moved ?? 0);
      if (moved > 0) {
        this.pendingSeen = true;
        this.foldedAtMs = performance.now();
      } else if (sentAtMs > this.foldedAtMs) this.pendingSeen = false;
      if (!foldLeftMore(moved)) return { rows: answer.rows };
    } else {
      if (ahead?.pending !== true) return { rows: answer.rows };
      this.pendingSeen = true;
    }
    // Increments were left pending (a backlog past one fold, or exports since the last look): folded, then the
    // statement read again.
    await this.schedule.beforeRead();
    this.foldedAtMs = performance.now();
    return this.pool.query(statement);
  }
}
