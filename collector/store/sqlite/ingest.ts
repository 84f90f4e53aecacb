import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { MetricsBatch, SpanBatch, SpanExample } from '../../model/batches.js';
import type { ApplyResult } from '../../model/records.js';
import type { IngestStore } from '../store.js';
import type { SqliteCore } from './core.js';
import { ExamplesWriter } from './writer/examples.js';
import { APPLY_STEP_POINTS } from './writer/index.js';

/** What ingest writes: each export one transaction, resolved after its commit. */
export class SqliteIngest implements IngestStore {
  private readonly spansTransaction: (examples: readonly SpanExample[]) => number;

  constructor(private readonly core: SqliteCore) {
    const examples = new ExamplesWriter(core.db, core.options.examplesPerCell);
    this.spansTransaction = core.db.transaction((list: readonly SpanExample[]) => examples.write(list));
  }

  /**
   * One transaction, applied in steps with a turn of the event loop between them (a large export would
   * otherwise hold up every other request); other writes wait for it. Reads in the meantime see the rows it has
   * added so far but none of its counts: those become visible through the fold, which is a write too.
   */
  applyMetrics(batch: MetricsBatch): Promise<ApplyResult> {
    const { core } = this;
    // A small export is applied in one go, as before: yielding would only keep it in flight longer.
    const large =
      batch.resources.reduce((sum, resource) => sum + resource.counters.length + resource.advertised.length + resource.advertisedCounts.length, 0) >
      APPLY_STEP_POINTS;
    return core.exclusive(async () => {
      // A large batch arrives straight from normalisation's last step: its first step starts a turn of its own.
      if (large) await yieldToEventLoop();
      core.db.exec('BEGIN');
      try {
        const steps = core.writer.apply(batch);
        let step = steps.next();
        while (step.done !== true) {
          await yieldToEventLoop();
          step = steps.next();
        }
        // The commit of a large batch has a turn of its own: SQLite may checkpoint the write-ahead log in it.
        if (large) await yieldToEventLoop();
        core.db.exec('COMMIT');
        // Nothing else writes until this resolves, so the caches may catch up over several turns.
        const caches = core.writer.commit();
        while (caches.next().done !== true) if (large) await yieldToEventLoop();
        core.writeFailure = undefined;
        return step.value;
      } catch (error) {
        if (core.db.inTransaction) core.db.exec('ROLLBACK');
        core.writer.rollback();
        throw core.failed(error);
      }
    });
  }

  applySpans(batch: SpanBatch): Promise<number> {
    if (batch.examples.length === 0) return Promise.resolve(0);
    return this.core.write(() => this.spansTransaction(batch.examples));
  }
}
