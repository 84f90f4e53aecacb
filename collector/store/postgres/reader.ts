import { MS_PER_DAY, MS_PER_HOUR } from '../../model/time.js';
import type { CellTotals, ExampleRecord, InstanceCellTotals, InstanceRecord, StepTotal } from '../../model/records.js';
import type { CellQuery, HistoryQuery, InstanceCellQuery, StepQuery } from '../common/queries.js';
import type { ClientSlot, DeclarationSlot, ExtensionSlot, RequiredSlot, TrendQuery, TrendResult } from '../common/trends.js';
import type { ExamplesQuery, InstancesQuery, RollupReader } from '../store.js';
import { storeRead } from './connection.js';
import type { PostgresCore } from './core.js';
import { readExamples } from './readers/examples.js';
import { readInstances } from './readers/instances.js';
import { RollupsReader } from './readers/rollups.js';
import { TrendsReader } from './readers/trends.js';

/** A matrix over more than two days is answered in whole hours (as the SQLite store). */
const HOURLY_ABOVE_MS = 2 * MS_PER_DAY;

/** The reads; those of the rollups fold what any replica acknowledged first (core.ts). */
export class PostgresReader implements RollupReader {
  private readonly rollups: RollupsReader;
  private readonly trends: TrendsReader;

  constructor(private readonly core: PostgresCore) {
    const { clock, retention } = core.options;
    this.rollups = new RollupsReader(core.pool, () => ({
      minuteHorizonMs: clock() - retention.minuteDays * MS_PER_DAY + MS_PER_HOUR,
      hourlyAboveMs: HOURLY_ABOVE_MS,
    }));
    this.trends = new TrendsReader(core.pool);
  }

  /** True when accepted exports may not be visible to reads yet: the last fold failed (reads answer from what is folded). */
  behind(): boolean {
    return this.core.fold.failed;
  }

  cellTotals(query: CellQuery): Promise<CellTotals> {
    return this.core.readFolded(() => this.rollups.cellTotals(query));
  }

  instanceCellTotals(query: InstanceCellQuery): Promise<InstanceCellTotals> {
    return this.core.readFolded(() => this.rollups.instanceCellTotals(query));
  }

  stepTotals(query: StepQuery): Promise<StepTotal[]> {
    return this.core.readFolded(() => this.rollups.stepTotals(query));
  }

  serverUnknownStepTotals(query: StepQuery): Promise<StepTotal[]> {
    return this.core.readFolded(() => this.rollups.serverUnknownStepTotals(query));
  }

  declarationTrend(query: TrendQuery): Promise<TrendResult<DeclarationSlot>> {
    return this.core.readFolded(() => this.trends.declarations(query));
  }

  clientTrend(query: TrendQuery): Promise<TrendResult<ClientSlot>> {
    return this.core.readFolded(() => this.trends.clients(query));
  }

  extensionTrend(query: TrendQuery): Promise<TrendResult<ExtensionSlot>> {
    return this.core.readFolded(() => this.trends.extensions(query));
  }

  requiredTrend(query: TrendQuery): Promise<TrendResult<RequiredSlot>> {
    return this.core.readFolded(() => this.trends.required(query));
  }

  historyStart(query: HistoryQuery): Promise<number | null> {
    return this.core.readFolded(() => this.rollups.historyStart(query));
  }

  instances(query: InstancesQuery): Promise<InstanceRecord[]> {
    return storeRead(() => this.core.snapshot((db) => readInstances(db, query)));
  }

  examples(query: ExamplesQuery): Promise<ExampleRecord[]> {
    return storeRead(() => readExamples(this.core.pool, query));
  }
}
