import { MS_PER_DAY, MS_PER_HOUR } from '../../model/time.js';
import type { CellTotals, ExampleRecord, InstanceCellTotals, InstanceRecord, StepTotal } from '../../model/records.js';
import type { CellQuery, HistoryQuery, InstanceCellQuery, StepQuery } from '../common/queries.js';
import type { ClientSlot, DeclarationSlot, ExtensionSlot, RequiredSlot, TrendQuery, TrendResult } from '../common/trends.js';
import type { ExamplesQuery, InstancesQuery, RollupReader } from '../store.js';
import type { SqliteCore } from './core.js';
import { ExamplesReader } from './readers/examples.js';
import { InstancesReader } from './readers/instances.js';
import { RollupsReader } from './readers/rollups.js';
import { TrendsReader } from './readers/trends.js';

/** A matrix over more than two days is answered in whole hours (see docs/api.md). */
const HOURLY_ABOVE_MS = 2 * MS_PER_DAY;

/**
 * The reads. Those of the rollups await the fold first (after any write in progress), so that they see every batch
 * whose apply has resolved; the instances and examples are written by the apply itself.
 */
export class SqliteReader implements RollupReader {
  private readonly rollups: RollupsReader;
  private readonly trends: TrendsReader;
  private readonly instancesReader: InstancesReader;
  private readonly examplesReader: ExamplesReader;

  constructor(private readonly core: SqliteCore) {
    const { clock, retention } = core.options;
    this.rollups = new RollupsReader(core.db, () => ({
      minuteHorizonMs: clock() - retention.minuteDays * MS_PER_DAY + MS_PER_HOUR,
      hourlyAboveMs: HOURLY_ABOVE_MS,
      nowMs: clock(),
    }));
    this.trends = new TrendsReader(core.db);
    this.instancesReader = new InstancesReader(core.db);
    this.examplesReader = new ExamplesReader(core.db);
  }

  behind(): boolean {
    return this.core.behind();
  }

  async cellTotals(query: CellQuery): Promise<CellTotals> {
    await this.core.foldPending();
    return this.rollups.cellTotals(query);
  }

  async instanceCellTotals(query: InstanceCellQuery): Promise<InstanceCellTotals> {
    await this.core.foldPending();
    return this.rollups.instanceCellTotals(query);
  }

  async stepTotals(query: StepQuery): Promise<StepTotal[]> {
    await this.core.foldPending();
    return this.rollups.stepTotals(query);
  }

  async serverUnknownStepTotals(query: StepQuery): Promise<StepTotal[]> {
    await this.core.foldPending();
    return this.rollups.serverUnknownStepTotals(query);
  }

  async declarationTrend(query: TrendQuery): Promise<TrendResult<DeclarationSlot>> {
    await this.core.foldPending();
    return this.trends.declarations(query);
  }

  async clientTrend(query: TrendQuery): Promise<TrendResult<ClientSlot>> {
    await this.core.foldPending();
    return this.trends.clients(query);
  }

  async extensionTrend(query: TrendQuery): Promise<TrendResult<ExtensionSlot>> {
    await this.core.foldPending();
    return this.trends.extensions(query);
  }

  async requiredTrend(query: TrendQuery): Promise<TrendResult<RequiredSlot>> {
    await this.core.foldPending();
    return this.trends.required(query);
  }

  async historyStart(query: HistoryQuery): Promise<number | null> {
    await this.core.foldPending();
    return this.rollups.historyStart(query);
  }

  async instances(query: InstancesQuery): Promise<InstanceRecord[]> {
    return this.instancesReader.read(query);
  }

  async examples(query: ExamplesQuery): Promise<ExampleRecord[]> {
    return this.examplesReader.read(query);
  }
}
