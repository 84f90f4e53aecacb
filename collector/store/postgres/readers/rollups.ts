import { CELL_LEVELS, SERIES_LEVELS, stepLevel } from '../../common/rollup-levels.js';
import { DECLARATION } from '../../../../contract/index.js';
import type { CellTotals, StepTotal, CellTotal, InstanceCellTotal, InstanceCellTotals } from '../../../model/records.js';
import { MS_PER_MINUTE, NANOS_PER_MINUTE } from '../../../model/time.js';
import {
  type BucketPlan,
  CELL_RANGES,
  INSTANCE_CELL_RANGES,
  type PlanOptions,
  type PlanRange,
  SERIES_RANGES,
  onlyHours,
  planBuckets,
  planParameters,
  presentRanges,
} from '../../common/bucket-plan.js';
import { CELL_COLUMNS, type DimColumn, INSTANCE_CELL_COLUMNS, INSTANCE_CELL_TABLE_COLUMNS, MAX_STORED_COUNT, unbound } from '../../common/columns.js';
import { type CellQuery, type HistoryQuery, type InstanceCellQuery, type StepQuery, needsClients } from '../../query/filters.js';
import { historyStartMs, stepParameters } from '../../common/queries.js';
import { type NamedStatement, type StatementRunner, preparedRead } from '../connection.js';
import { type ClosedBuckets, READ_CLOSED_BUCKETS, closedBucketsOf } from '../../common/closed-buckets.js';
import { safeSum } from './sql.js';

const CLOSED_BUCKETS = preparedRead(READ_CLOSED_BUCKETS);

const sum = (table: string, bucket: string, owner: string, id: string, from: string, to: string): string =>
  `(SELECT ${safeSum('count')} FROM ${table} WHERE ${owner} = ${id} AND ${bucket} >= @${from}::bigint AND ${bucket} < @${to}::bigint)`;

/** SQL: a row's sum over `ranges` (`owner` = `id`), their parameters named with `prefix`. */
const sums = (ranges: readonly PlanRange[], owner: string, id: string, prefix = ''): string =>
  ranges.map(([table, bucket, from, to]) => sum(table, bucket, owner, id, `${prefix}${from}`, `${prefix}${to}`)).join(' + ') || '0';

/** A read's buckets, and the SQL summing a row's counts over them. */
interface PlannedSums {
  plan: BucketPlan;
  parameters: Record<string, unknown>;
  /** Which ranges the statement sums (one statement per shape). */
  key: string;
  /** No range to sum: nothing to read. */
  empty: boolean;
  /** The one range of whole hours the plan is, when it is only that (the open part of a long range): common/bucket-plan.ts `onlyHours`. */
  hours: { from: number; to: number } | undefined;
  /** SQL: a row's sum, `owner` = `id`. */
  sum(owner: string, id: string): string;
}

/**
 * The plan of a range over `ranges` (common/bucket-plan.ts). A range that reaches the minute under way is planned both
 * ways: up to the end of the hour or day under way, read from its own row (a seek per row fewer), which holds only
 * while nothing is stored after the minute under way (a point dated ahead of the clock, another host's); and as it
 * is. The statement picks the way itself from the newest point logged (one seek, evaluated once), where SQLite's
 * reader asks first: a round trip fewer.
 */
function plannedSums(fromMs: number, toMs: number, options: PlanOptions, ranges: readonly PlanRange[]): PlannedSums {
  const { nowMs, ...asItIs } = options;
  const plan = planBuckets(fromMs, toMs, asItIs);
  const parameters: Record<string, unknown> = planParameters(plan);
  const present = presentRanges(ranges, parameters);
  const single: PlannedSums = {
    plan,
    parameters,
    key: present.map((range) => range[2]).join(','),
    empty: present.length === 0,
    hours: onlyHours(plan),
    sum: (owner, id) => sums(present, owner, id),
  };
  if (nowMs === undefined) return single;
  const endingNow = planParameters(planBuckets(fromMs, toMs, options));
  if (Object.entries(endingNow).every(([name, value]) => parameters[name] === value)) return single;
  const nowPresent = presentRanges(ranges, endingNow);
  for (const [name, value] of Object.entries(endingNow)) parameters[`now_${name}`] = value;
  // Nothing logged that ends after the minute under way.
  parameters['nowEndNs'] = ((BigInt(Math.floor(nowMs / MS_PER_MINUTE)) + 1n) * NANOS_PER_MINUTE).toString();
  return {
    plan,
    parameters,
    key: `${single.key};now:${nowPresent.map((range) => range[2]).join(',')}`,
    empty: present.length === 0 && nowPresent.length === 0,
    hours: undefined,
    sum: (owner, id) =>
      `(CASE WHEN (SELECT coalesce(max(end_ns), 0) FROM point_log) < @nowEndNs::bigint THEN ${sums(nowPresent, owner, id, 'now_')} ELSE ${sums(present, owner, id)} END)`,
  };
}

const FLAG_COLUMNS = CELL_COLUMNS.filter((column) => column.flag);
const INSTANCE_FLAG_COLUMNS = INSTANCE_CELL_COLUMNS.filter((column) => column.flag);
const STEP_COLUMNS = FLAG_COLUMNS;

/** `column AS "key"`: rows come back keyed as the records are (quoted: PostgreSQL folds bare names to lower case). */
const selected = (columns: readonly DimColumn[], table = ''): string => columns.map((column) => `${table}${column.column} AS "${column.key}"`).join(', ');

function records<T>(rows: Record<string, unknown>[], flags: readonly DimColumn[]): T[] {
  for (const row of rows) for (const column of flags) row[column.key] = unbound(column, row[column.key]);
  return rows as T[];
}

/** A series' cell columns, extension series without their declaration state (as their cells). */
const SERIES_CELL_COLUMNS = CELL_COLUMNS.map((column) =>
  column.key === 'clientDeclaration' ? `CASE WHEN kind = 0 THEN ${column.column} END AS "${column.key}"` : `${column.column} AS "${column.key}"`,
).join(', ');
/**
 * Requests answered before any server instance existed: the cells do not keep the server's declaration, the series
 * do (found by a partial index, migration 004).
 */
const UNKNOWN_SERIES = `series s JOIN instances i ON i.id = s.instance_ref`;
const UNKNOWN_WHERE = `s.server_declaration = '${DECLARATION.unknown}'`;

/** One seek per cell into each rollup's primary key (cell, bucket): no index orders the buckets alone. */
const OLDEST = preparedRead(`
  SELECT min((SELECT min(minute) FROM cell_minute WHERE cell_id = c.id))::float8 AS minute,
         min((SELECT min(hour) FROM cell_hour WHERE cell_id = c.id))::float8 AS hour
  FROM cells c
  WHERE (@service::text IS NULL AND c.scope = 1 AND c.service IS NULL) OR (c.scope = 0 AND c.service = @service::text)`);

/**
 * The rollup reads, on the bucket plan of common/bucket-plan.ts: a statement sums only the plan's non-empty ranges
 * (one statement per shape). Its per-row total is computed once (`OFFSET 0` keeps PostgreSQL from inlining the subquery,
 * which would evaluate every sum again for the `n > 0` filter).
 */
export class RollupsReader {
  private readonly byCell = new Map<string, NamedStatement>();
  private readonly hourCells = new Map<string, NamedStatement>();
  private readonly bySeries = new Map<string, NamedStatement>();
  private readonly perInstance = new Map<string, NamedStatement>();
  private readonly instanceCells = new Map<string, NamedStatement>();
  private readonly steps: Map<string, NamedStatement>;
  private readonly unknownCells = new Map<string, NamedStatement>();
  private readonly unknownSteps: Map<string, NamedStatement>;

  constructor(
    private readonly db: StatementRunner,
    private readonly planOptions: () => Omit<PlanOptions, 'useDays'>,
  ) {
    const flags = STEP_COLUMNS.map((column) => `c.${column.column}`).join(', ');
    this.steps = new Map(
      CELL_LEVELS.map((level) => [
        level.table,
        preparedRead(`
          SELECT ((@m0::bigint + ((b.${level.bucket} * ${level.minutes} - @m0::bigint) / @step::bigint) * @step::bigint) * ${MS_PER_MINUTE})::bigint AS "tMs",
                 c.kind AS kind, ${selected(STEP_COLUMNS, 'c.')}, ${safeSum('b.count')} AS count
          FROM cells c JOIN ${level.table} b ON b.cell_id = c.id AND b.${level.bucket} >= @b0::bigint AND b.${level.bucket} < @b1::bigint
          WHERE (c.kind = 0 OR c.extension_id = @extension::text)
            AND ((@service::text IS NULL AND c.scope = 1) OR (c.scope = 0 AND c.service = @service::text))
            AND (@client::text IS NULL OR c.client_name = @client::text)
          GROUP BY 1, c.kind, ${flags}`),
      ]),
    );
    const seriesFlags = STEP_COLUMNS.map((column) => `s.${column.column}`).join(', ');
    this.unknownSteps = new Map(
      SERIES_LEVELS.map((level) => [
        level.table,
        preparedRead(`
          SELECT ((@m0::bigint + ((b.${level.bucket} * ${level.minutes} - @m0::bigint) / @step::bigint) * @step::bigint) * ${MS_PER_MINUTE})::bigint AS "tMs",
                 s.kind AS kind, ${selected(STEP_COLUMNS, 's.')}, ${safeSum('b.count')} AS count
          FROM ${UNKNOWN_SERIES} JOIN ${level.table} b ON b.series_id = s.id AND b.${level.bucket} >= @b0::bigint AND b.${level.bucket} < @b1::bigint
          WHERE ${UNKNOWN_WHERE}
            AND (s.kind = 0 OR s.extension_id = @extension::text)
            AND (@service::text IS NULL OR i.service = @service::text)
            AND (@client::text IS NULL OR s.client_name = @client::text)
          GROUP BY 1, s.kind, ${seriesFlags}`),
      ]),
    );
  }

  async cellTotals(query: CellQuery): Promise<CellTotals> {
    // One statement each, run to its end: a read whose asker has gone is not started.
    query.signal?.throwIfAborted();
    const byInstance = query.instance !== undefined;
    const narrowed = { service: query.service ?? null, instance: query.instance ?? null };
    const planned = plannedSums(query.fromMs, query.toMs, { ...this.planOptions(), useDays: !byInstance }, byInstance ? SERIES_RANGES : CELL_RANGES);
    const { plan } = planned;
    const statement = byInstance
      ? this.seriesStatement(planned)
      : planned.hours !== undefined
        ? this.hourCellStatement(query.service !== undefined)
        : this.cellStatement(planned);
    // The same range from the series rollups (no daily level: the same buckets, split differently).
    const unknown = plannedSums(query.fromMs, query.toMs, { ...this.planOptions(), useDays: false }, SERIES_RANGES);
    // Both at once: they go in one round trip (folded-reads.ts).
    const [rows, unknownRows] = await Promise.all([
      planned.empty ? [] : statement.all<Record<string, unknown>>(this.db, { ...planned.parameters, ...narrowed }),
      unknown.empty ? [] : this.unknownStatement(unknown).all<Record<string, unknown>>(this.db, { ...unknown.parameters, ...narrowed }),
    ]);
    return {
      fromMs: plan.fromMs,
      toMs: plan.toMs,
      resolution: plan.resolution,
      cells: records<CellTotal>(rows, FLAG_COLUMNS),
      serverUnknown: records<CellTotal>(unknownRows, FLAG_COLUMNS),
    };
  }

  async closedBuckets(): Promise<ClosedBuckets> {
    const [row] = await CLOSED_BUCKETS.all<{ generation: string | null; openHour: string | null }>(this.db, {});
    return closedBucketsOf(row?.generation, row?.openHour);
  }

  /** The start of the oldest minute the matrix rollups hold (all services, or one service's); common/queries.ts turns it into a time. */
  async historyStart(query: HistoryQuery): Promise<number | null> {
    const [row] = await OLDEST.all<{ minute: number | null; hour: number | null }>(this.db, { service: query.service ?? null });
    return historyStartMs(row?.minute ?? null, row?.hour ?? null);
  }

  /** Per instance: from the instance cells' rollups (a daily level), or, when the clients are asked for, from the series rollups (none). */
  async instanceCellTotals(query: InstanceCellQuery): Promise<InstanceCellTotals> {
    query.signal?.throwIfAborted();
    const bySeries = needsClients(query);
    const planned = plannedSums(query.fromMs, query.toMs, { ...this.planOptions(), useDays: !bySeries }, bySeries ? SERIES_RANGES : INSTANCE_CELL_RANGES);
    const { plan } = planned;
    const parameters: Record<string, unknown> = {
      ...planned.parameters,
      service: query.service ?? null,
      instance: query.instance ?? null,
      client: query.clientName ?? null,
    };
    const narrowed = bySeries ? 'all' : query.instanceRefs !== undefined ? 'listed' : query.requestsOnly === true ? 'requests' : 'all';
    if (narrowed === 'listed') parameters['refs'] = [...(query.instanceRefs ?? [])];
    const statement = bySeries ? this.perInstanceStatement(planned) : this.instanceCellStatement(planned, narrowed);
    const rows = planned.empty ? [] : await statement.all<Record<string, unknown>>(this.db, parameters);
    return { fromMs: plan.fromMs, toMs: plan.toMs, resolution: plan.resolution, cells: records<InstanceCellTotal>(rows, INSTANCE_FLAG_COLUMNS) };
  }

  private perInstanceStatement(planned: PlannedSums): NamedStatement {
    const { key } = planned;
    let statement = this.perInstance.get(key);
    if (statement === undefined) {
      const columns = INSTANCE_CELL_COLUMNS.map((column) =>
        column.key === 'clientDeclaration' ? `CASE WHEN kind = 0 THEN ${column.column} END AS "${column.key}"` : `${column.column} AS "${column.key}"`,
      ).join(', ');
      statement = preparedRead(`
        SELECT kind, ${columns}, service_name AS service, instance_name AS "instanceId", build_name AS build, instance_ref AS "instanceRef",
               LEAST(n, ${MAX_STORED_COUNT})::bigint AS count FROM (
          SELECT s.*, i.service AS service_name, i.instance_id AS instance_name, i.build_key AS build_name,
            ${planned.sum('series_id', 's.id')} AS n
          FROM instances i JOIN series s ON s.instance_ref = i.id
          WHERE (@instance::text IS NULL OR i.instance_id = @instance::text) AND (@service::text IS NULL OR i.service = @service::text)
            AND (@client::text IS NULL OR s.client_name = @client::text)
          OFFSET 0
        ) AS t WHERE n > 0`);
      this.perInstance.set(key, statement);
    }
    return statement;
  }

  /** Every instance cell, the request cells alone (what rows are ranked by), or the listed instances' (`@refs`). */
  private instanceCellStatement(planned: PlannedSums, narrowed: 'all' | 'requests' | 'listed'): NamedStatement {
    const key = `${narrowed}:${planned.key}`;
    let statement = this.instanceCells.get(key);
    if (statement === undefined) {
      const columns = INSTANCE_CELL_COLUMNS.map((column) =>
        INSTANCE_CELL_TABLE_COLUMNS.includes(column) ? `${column.column} AS "${column.key}"` : `NULL AS "${column.key}"`,
      ).join(', ');
      const where = { all: '', requests: ' AND c.kind = 0', listed: ' AND i.id = ANY(@refs::bigint[])' }[narrowed];
      statement = preparedRead(`
        SELECT kind, ${columns}, service_name AS service, instance_name AS "instanceId", build_name AS build, instance_ref AS "instanceRef",
               LEAST(n, ${MAX_STORED_COUNT})::bigint AS count FROM (
          SELECT c.*, i.service AS service_name, i.instance_id AS instance_name, i.build_key AS build_name,
            ${planned.sum('instance_cell_id', 'c.id')} AS n
          FROM instances i JOIN instance_cells c ON c.instance_ref = i.id
          WHERE (@instance::text IS NULL OR i.instance_id = @instance::text) AND (@service::text IS NULL OR i.service = @service::text)${where}
          OFFSET 0
        ) AS t WHERE n > 0`);
      this.instanceCells.set(key, statement);
    }
    return statement;
  }

  private unknownStatement(planned: PlannedSums): NamedStatement {
    const { key } = planned;
    let statement = this.unknownCells.get(key);
    if (statement === undefined) {
      statement = preparedRead(`
        SELECT kind, ${SERIES_CELL_COLUMNS}, LEAST(n, ${MAX_STORED_COUNT})::bigint AS count FROM (
          SELECT s.*, ${planned.sum('series_id', 's.id')} AS n
          FROM ${UNKNOWN_SERIES}
          WHERE ${UNKNOWN_WHERE} AND (@instance::text IS NULL OR i.instance_id = @instance::text) AND (@service::text IS NULL OR i.service = @service::text)
          OFFSET 0
        ) AS t WHERE n > 0`);
      this.unknownCells.set(key, statement);
    }
    return statement;
  }

  /** The part of {@link stepTotals} answered before any server instance existed, from the coarsest series rollup the step allows. */
  async serverUnknownStepTotals(query: StepQuery): Promise<StepTotal[]> {
    query.signal?.throwIfAborted();
    const level = stepLevel(SERIES_LEVELS, query.stepMinutes);
    return this.stepRows(this.unknownSteps.get(level.table) as NamedStatement, level.minutes, query);
  }

  private cellStatement(planned: PlannedSums): NamedStatement {
    const { key } = planned;
    let statement = this.byCell.get(key);
    if (statement === undefined) {
      statement = preparedRead(`
        SELECT id::float8 AS "cellId", kind, ${selected(CELL_COLUMNS)}, LEAST(n, ${MAX_STORED_COUNT})::bigint AS count FROM (
          SELECT c.*, ${planned.sum('cell_id', 'c.id')} AS n
          FROM cells c
          WHERE (@service::text IS NULL AND c.scope = 1) OR (c.scope = 0 AND c.service = @service::text)
          OFFSET 0
        ) AS t WHERE n > 0`);
      this.byCell.set(key, statement);
    }
    return statement;
  }

  /**
   * The cells over whole hours alone (the open part of a long range, closed-range-cache.ts), as a join the planner
   * may run from the hour out (the hours' rows by the index of migration 016, joined to the cells by hash) or one
   * seek per cell (the primary key), whichever its estimates make cheaper: all services' cells are about a thousand
   * seeks where the open hour holds a few thousand rows in one range, one service's a hundred. One statement for
   * each narrowing, so that the plan PostgreSQL keeps for a prepared statement fits the one it serves.
   */
  private hourCellStatement(oneService: boolean): NamedStatement {
    const key = oneService ? 'service' : 'all';
    let statement = this.hourCells.get(key);
    if (statement === undefined) {
      statement = preparedRead(`
        SELECT c.id::float8 AS "cellId", c.kind AS kind, ${selected(CELL_COLUMNS, 'c.')}, ${safeSum('b.count')} AS count
        FROM cells c JOIN cell_hour b ON b.cell_id = c.id AND b.hour >= @h0::bigint AND b.hour < @h1::bigint
        WHERE ${oneService ? 'c.scope = 0 AND c.service = @service::text' : 'c.scope = 1'}
        GROUP BY c.id HAVING sum(b.count) > 0`);
      this.hourCells.set(key, statement);
    }
    return statement;
  }

  /** A series has every cell column (and more); an extension series' declaration state is left out, as its cell does. */
  private seriesStatement(planned: PlannedSums): NamedStatement {
    const { key } = planned;
    let statement = this.bySeries.get(key);
    if (statement === undefined) {
      statement = preparedRead(`
        SELECT kind, ${SERIES_CELL_COLUMNS}, LEAST(n, ${MAX_STORED_COUNT})::bigint AS count FROM (
          SELECT s.*, ${planned.sum('series_id', 's.id')} AS n
          FROM instances i JOIN series s ON s.instance_ref = i.id
          WHERE i.instance_id = @instance::text AND (@service::text IS NULL OR i.service = @service::text)
          OFFSET 0
        ) AS t WHERE n > 0`);
      this.bySeries.set(key, statement);
    }
    return statement;
  }

  async stepTotals(query: StepQuery): Promise<StepTotal[]> {
    query.signal?.throwIfAborted();
    const level = stepLevel(CELL_LEVELS, query.stepMinutes);
    return this.stepRows(this.steps.get(level.table) as NamedStatement, level.minutes, query);
  }

  private async stepRows(statement: NamedStatement, minutes: number, query: StepQuery): Promise<StepTotal[]> {
    const rows = await statement.all<Record<string, unknown>>(this.db, stepParameters(query, minutes));
    return records<StepTotal>(rows, STEP_COLUMNS);
  }
}
