import type { CellTotals, ExampleRecord, InstanceCellTotals, InstanceRecord, StepTotal } from '../../model/records.js';
import type { ExamplesQuery, InstancesQuery, RollupReader } from '../store.js';
import type { ClosedBuckets } from './closed-buckets.js';
import { ClosedRangeCache } from './closed-range-cache.js';
import { summedPerService } from './per-service.js';
import type { FoldSchedule } from './fold-schedule.js';
import type { CellQuery, HistoryQuery, InstanceCellQuery, StepQuery } from '../query/filters.js';
import type { ClientSlot, DeclarationSlot, ExtensionSlot, RequiredSlot, TrendQuery, TrendReader, TrendResult } from '../query/trends.js';

type Answer<T> = T | Promise<T>;

/** A dialect's reads of the rollups, as they are (no fold): what {@link FoldFirstReader} folds before. */
export interface RollupQueries {
  cellTotals(query: CellQuery): Answer<CellTotals>;
  instanceCellTotals(query: InstanceCellQuery): Answer<InstanceCellTotals>;
  stepTotals(query: StepQuery): Answer<StepTotal[]>;
  serverUnknownStepTotals(query: StepQuery): Answer<StepTotal[]>;
  historyStart(query: HistoryQuery): Answer<number | null>;
  /** Which buckets are closed, and their generation (closed-buckets.ts). */
  closedBuckets(): Answer<ClosedBuckets>;
}

/** A dialect's reads of what ingest writes directly (not folded): instances and span examples. */
export interface RowQueries {
  instances(query: InstancesQuery): Promise<InstanceRecord[]>;
  examples(query: ExamplesQuery): Promise<ExampleRecord[]>;
}

/** How a reader folds before it reads: the store's fold schedule, or a dialect's own way of folding in each read. */
export interface ReadFold {
  beforeRead(): Promise<void>;
  /** The last fold failed: reads answer from what is folded. */
  behind(): boolean;
}

/** The fold schedule as a {@link ReadFold}: a fold before every read. */
export const foldBeforeEachRead = (schedule: FoldSchedule): ReadFold => ({
  beforeRead: () => schedule.beforeRead(),
  behind: () => schedule.failed,
});

/**
 * The reader role of every store: each read of the rollups folds first (through the store's one fold schedule, or
 * in the read's own statements where a dialect does so), so that it sees every batch whose apply has resolved; a fold that fails does not fail the read, which answers from what is
 * folded and says so through `behind()`. Long-range cell reads keep their closed part (closed-range-cache.ts).
 * `mapError` turns a dialect's failure into the store's errors.
 */
export class FoldFirstReader implements RollupReader {
  private readonly closedRanges: ClosedRangeCache;

  constructor(
    private readonly fold: ReadFold,
    private readonly rollups: RollupQueries,
    private readonly trends: TrendReader,
    private readonly rows: RowQueries,
    private readonly mapError: (error: unknown) => unknown = (error) => error,
  ) {
    this.closedRanges = new ClosedRangeCache(() => this.rollups.closedBuckets());
  }

  behind(): boolean {
    return this.fold.behind();
  }

  cellTotals(query: CellQuery): Promise<CellTotals> {
    return this.folded(() => this.closedRanges.read('cells', query, (range) => this.rollups.cellTotals(range)));
  }

  instanceCellTotals(query: InstanceCellQuery): Promise<InstanceCellTotals> {
    // Summed per service as each part is read: what a long range keeps of it is then a total per service and cell.
    const read = (range: InstanceCellQuery): Answer<InstanceCellTotals> =>
      query.perService === true ? Promise.resolve(this.rollups.instanceCellTotals(range)).then(summedPerService) : this.rollups.instanceCellTotals(range);
    return this.folded(() => this.closedRanges.read('instance cells', query, read));
  }

  stepTotals(query: StepQuery): Promise<StepTotal[]> {
    return this.folded(() => this.rollups.stepTotals(query));
  }

  serverUnknownStepTotals(query: StepQuery): Promise<StepTotal[]> {
    return this.folded(() => this.rollups.serverUnknownStepTotals(query));
  }

  historyStart(query: HistoryQuery): Promise<number | null> {
    return this.folded(() => this.rollups.historyStart(query));
  }

  declarationTrend(query: TrendQuery): Promise<TrendResult<DeclarationSlot>> {
    return this.folded(() => this.trends.declarationTrend(query));
  }

  clientTrend(query: TrendQuery): Promise<TrendResult<ClientSlot>> {
    return this.folded(() => this.trends.clientTrend(query));
  }

  extensionTrend(query: TrendQuery): Promise<TrendResult<ExtensionSlot>> {
    return this.folded(() => this.trends.extensionTrend(query));
  }

  requiredTrend(query: TrendQuery): Promise<TrendResult<RequiredSlot>> {
    return this.folded(() => this.trends.requiredTrend(query));
  }

  instances(query: InstancesQuery): Promise<InstanceRecord[]> {
    return this.rows.instances(query);
  }

  examples(query: ExamplesQuery): Promise<ExampleRecord[]> {
    return this.rows.examples(query);
  }

  private async folded<T>(read: () => Answer<T>): Promise<T> {
    await this.fold.beforeRead();
    try {
      return await read();
    } catch (error) {
      throw this.mapError(error);
    }
  }
}
