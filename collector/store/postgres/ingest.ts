import type { MetricsBatch, SpanBatch } from '../../model/batches.js';
import type { ApplyResult } from '../../model/records.js';
import type { IngestStore } from '../store.js';
import { inTransaction } from './connection.js';
import type { PostgresCore } from './core.js';
import { ExamplesWriter } from './writer/examples.js';

/**
 * What ingest writes: exports are written in transactions (those that arrive while one is in flight share the next)
 * that convert, deduplicate and append their increments to `pending_increments` (writer/index.ts; a new instance's
 * row is created just before, in one of its own), and `applyMetrics` resolves after the commit that holds its export.
 */
export class PostgresIngest implements IngestStore {
  private readonly examples: ExamplesWriter;

  constructor(private readonly core: PostgresCore) {
    this.examples = new ExamplesWriter(core.options.examplesPerCell);
  }

  applyMetrics(batch: MetricsBatch): Promise<ApplyResult> {
    return this.core.writer.apply(batch);
  }

  async applySpans(batch: SpanBatch): Promise<number> {
    if (batch.examples.length === 0) return 0;
    return inTransaction(this.core.pool, (db) => this.examples.write(db, batch.examples));
  }
}
