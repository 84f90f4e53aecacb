import type pg from 'pg';
import type { ReadFold } from '../common/fold-first-reader.js';
import type { FoldSchedule } from '../common/fold-schedule.js';
import { type AheadStatement, type PipelineFailure, type PipelinedResult, type Statement, type StatementRunner, pipelined } from './connection.js';
import { FOLD_BEFORE_READ, PENDING_BEFORE_READ, foldLeftMore } from './fold.js';

/** A statement waiting to be sent, and its caller's promise. */
interface Waiting {
  statement: Statement;
  resolve(answer: { rows: unknown[] }): void;
  reject(error: unknown): void;
}

/**
 * The rollup reads' statements, sent together with the fold before them in one round trip (connection.ts
 * `pipelined`): the statements a read asks for at once (a matrix's cells, the requests answered before any server
 * existed, the `-32021` trend and which buckets are closed) are gathered until the event loop's turn ends, and go on
 * one connection in one batch. A read then pays one round trip and one fold (or look) however many statements it
 * makes, rather than one of each per statement. The fold commits first, so the statements see every export
 * acknowledged before they began, on any replica. When the fold schedule is behind (a fold failed a moment ago), the
 * statements are sent without it: the reader folds first through the schedule, which then waits for locks only
 * briefly (fold-first-reader.ts). A fold that fails here does not fail the read: the statements are sent again
 * without it and answer from what is folded, and the schedule reports it behind.
 *
 * While the last look found nothing pending (no export since), the statements go behind a look for pending
 * increments instead of the fold: the fold statement, even with nothing to move, opens every rollup table it could
 * write (about 1 ms of the database's time), several times the statements of a small read. When the look finds
 * increments pending, they are folded through the schedule and the statements are sent again, and the next batches
 * carry the fold again, as long as exports keep coming. Either way the statements see every export acknowledged
 * before they began.
 */
export class FoldedReads implements StatementRunner {
  constructor(
    private readonly pool: pg.Pool,
    private readonly schedule: FoldSchedule,
  ) {}

  /** What the fold-first reader folds through: only when the schedule is behind (otherwise every batch folds). */
  readonly readFold: ReadFold = {
    beforeRead: (): Promise<void> => (this.schedule.failed ? this.schedule.beforeRead() : Promise.resolve()),
    behind: (): boolean => this.schedule.failed,
  };

  /** Whether increments were found pending since a batch last found none: the batches carry the fold. */
  private pendingSeen = true;
  /** When increments were last folded here: a batch sent before that which found none says nothing of after. */
  private foldedAtMs = Number.NEGATIVE_INFINITY;
  /** The statements asked for in this turn of the event loop, sent together when it ends. */
  private waiting: Waiting[] = [];

  query(statement: Statement): Promise<{ rows: unknown[] }> {
    return new Promise((resolve, reject) => {
      if (this.waiting.push({ statement, resolve, reject }) === 1) setImmediate(() => this.sendWaiting());
    });
  }

  private sendWaiting(): void {
    const batch = this.waiting.splice(0);
    // Settling a promise twice does nothing: only what is still waiting takes a failure here.
    this.send(batch).catch((error: unknown) => batch.forEach((waiting) => waiting.reject(error)));
  }

  private async send(batch: Waiting[]): Promise<void> {
    if (this.schedule.failed) return this.sendAlone(batch);
    const sentAtMs = performance.now();
    const folds = this.pendingSeen;
    let answer: PipelinedResult | undefined;
    try {
      answer = await this.pipeline(folds ? FOLD_BEFORE_READ : PENDING_BEFORE_READ, batch);
      if (answer === undefined) return;
    } catch (error) {
      const failure = error as Partial<PipelineFailure>;
      if (failure.aheadCommitted === true) return this.settleFailed(batch, failure);
      if (!folds) return batch.forEach((waiting) => waiting.reject(error));
      this.schedule.readFoldFailed(error);
      return this.sendAlone(batch);
    }
    const ahead = answer.ahead[0];
    let settled = true;
    if (folds) {
      const moved = Number(ahead?.moved ?? 0);
      if (moved > 0) {
        this.pendingSeen = true;
        this.foldedAtMs = performance.now();
      } else if (sentAtMs > this.foldedAtMs) this.pendingSeen = false;
      settled = !foldLeftMore(moved);
    } else if (ahead?.pending === true) {
      this.pendingSeen = true;
      settled = false;
    }
    if (settled) return batch.forEach((waiting, index) => waiting.resolve({ rows: answer.rows[index] ?? [] }));
    // Increments were left pending (a backlog past one fold, or exports since the last look): folded, then the
    // statements read again.
    try {
      await this.schedule.beforeRead();
    } catch (error) {
      return batch.forEach((waiting) => waiting.reject(error));
    }
    this.foldedAtMs = performance.now();
    return this.sendAlone(batch);
  }

  /** The statements in one round trip without a fold ahead. */
  private async sendAlone(batch: Waiting[]): Promise<void> {
    try {
      const answer = await this.pipeline(undefined, batch);
      answer?.rows.forEach((rows, index) => batch[index]?.resolve({ rows }));
    } catch (error) {
      this.settleFailed(batch, error as Partial<PipelineFailure>);
    }
  }

  /**
   * After a statement of `batch` failed: those answered before it have their rows, it fails, and those after it
   * (which the server skipped) are sent again. Each statement fails or succeeds as if it had been sent alone.
   */
  private settleFailed(batch: Waiting[], failure: Partial<PipelineFailure>): void {
    const answered = failure.answered ?? [];
    answered.forEach((rows, index) => batch[index]?.resolve({ rows }));
    batch[answered.length]?.reject(failure);
    const skipped = batch.slice(answered.length + 1);
    if (skipped.length > 0) void this.sendAlone(skipped);
  }

  /**
   * `batch` on one pooled connection, discarded after a failure (which statements ran, and whether a transaction is
   * open, is the failure's to say). Undefined when no connection was had: every statement of the batch failed with that.
   */
  private async pipeline(ahead: AheadStatement | undefined, batch: Waiting[]): Promise<PipelinedResult | undefined> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      batch.forEach((waiting) => waiting.reject(error));
      return undefined;
    }
    try {
      const answer = await pipelined(
        client,
        ahead,
        batch.map((waiting) => waiting.statement),
      );
      client.release();
      return answer;
    } catch (error) {
      client.release(error as Error);
      throw error;
    }
  }
}
