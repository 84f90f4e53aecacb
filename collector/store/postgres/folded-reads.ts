import type pg from 'pg';
import type { ReadFold } from '../common/fold-first-reader.js';
import type { FoldSchedule } from '../common/fold-schedule.js';
import { type Statement, type StatementRunner, led } from './connection.js';
import { FOLD_BEFORE_READ, foldLeftMore } from './fold.js';

/**
 * The rollup reads' statements, each with the fold before it in the same round trip (connection.ts `led`): the fold
 * commits first, so the statement sees every export acknowledged before it began, on any replica, and a read costs
 * no round trip of its own to look for pending increments. When the fold schedule is behind (a fold failed a moment
 * ago), the statement is sent alone: the reader folds first through the schedule, which then waits for locks only
 * briefly (fold-first-reader.ts). A fold that fails here does not fail the read: the statement is sent again alone
 * and answers from what is folded, and the schedule reports it behind.
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

  async query(statement: Statement): Promise<{ rows: unknown[] }> {
    if (this.schedule.failed) return this.pool.query(statement);
    const client = await this.pool.connect();
    let answer: { ahead: Record<string, unknown>[]; rows: unknown[] };
    try {
      answer = await led(client, FOLD_BEFORE_READ, statement);
      client.release();
    } catch (error) {
      // Discarded: which statements ran, and whether a transaction is open, is the failure's to say.
      client.release(error as Error);
      if ((error as { aheadCommitted?: boolean }).aheadCommitted === true) throw error;
      this.schedule.readFoldFailed(error);
      return this.pool.query(statement);
    }
    if (!foldLeftMore(Number(answer.ahead[0]?.moved ?? 0))) return { rows: answer.rows };
    // More was pending than one fold moves (a backlog): the rest folded, then the statement read again.
    await this.schedule.beforeRead();
    return this.pool.query(statement);
  }
}
