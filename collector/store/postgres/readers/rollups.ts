import type { CellTotals, StepTotal, CellTotal } from '../../../model/records.js';
import { MINUTES_PER_DAY, MINUTES_PER_HOUR, MS_PER_MINUTE } from '../../../model/time.js';
import { type PlanOptions, planBuckets, planParameters } from '../../bucket-plan.js';
import { CELL_COLUMNS, type DimColumn, MAX_STORED_COUNT, unbound } from '../../sqlite/columns.js';
import type { CellQuery, StepQuery } from '../../store.js';
import { NamedStatement, type Queryable } from '../connection.js';
import { safeSum } from './sql.js';

const sum = (table: string, bucket: string, owner: string, id: string, from: string, to: string): string =>
  `(SELECT ${safeSum('count')} FROM ${table} WHERE ${owner} = ${id} AND ${bucket} >= @${from}::bigint AND ${bucket} < @${to}::bigint)`;

const FLAG_COLUMNS = CELL_COLUMNS.filter((column) => column.flag);
const STEP_COLUMNS = FLAG_COLUMNS;
const LEVELS = [
  { table: 'cell_day', bucket: 'day', minutes: MINUTES_PER_DAY },
  { table: 'cell_hour', bucket: 'hour', minutes: MINUTES_PER_HOUR },
  { table: 'cell_minute', bucket: 'minute', minutes: 1 },
] as const;

/** `column AS "key"`: rows come back keyed as the records are (quoted: PostgreSQL folds bare names to lower case). */
const selected = (columns: readonly DimColumn[], table = ''): string => columns.map((column) => `${table}${column.column} AS "${column.key}"`).join(', ');

function records<T>(rows: Record<string, unknown>[], flags: readonly DimColumn[]): T[] {
  for (const row of rows) for (const column of flags) row[column.key] = unbound(column, row[column.key]);
  return rows as T[];
}

/** The rollup reads of the SQLite store (sqlite/readers/rollups.ts), in PostgreSQL's dialect, on the same plan. */
export class RollupsReader {
  private readonly byCell: NamedStatement;
  private readonly bySeries: NamedStatement;
  private readonly steps: Map<string, NamedStatement>;

  constructor(
    private readonly db: Queryable,
    private readonly planOptions: () => Omit<PlanOptions, 'useDays'>,
  ) {
    this.byCell = new NamedStatement(`
      SELECT kind, ${selected(CELL_COLUMNS)}, LEAST(n, ${MAX_STORED_COUNT})::bigint AS count FROM (
        SELECT c.*,
          ${sum('cell_day', 'day', 'cell_id', 'c.id', 'd0', 'd1')}
          + ${sum('cell_hour', 'hour', 'cell_id', 'c.id', 'h0', 'h1')}
          + ${sum('cell_hour', 'hour', 'cell_id', 'c.id', 'h2', 'h3')}
          + ${sum('cell_minute', 'minute', 'cell_id', 'c.id', 'm0', 'm1')}
          + ${sum('cell_minute', 'minute', 'cell_id', 'c.id', 'm2', 'm3')} AS n
        FROM cells c
        WHERE (@service::text IS NULL AND c.scope = 1) OR (c.scope = 0 AND c.service = @service::text)
      ) AS t WHERE n > 0`);
    this.bySeries = new NamedStatement(`
      SELECT kind, ${CELL_COLUMNS.map((column) => (column.key === 'clientDeclaration' ? `CASE WHEN kind = 0 THEN ${column.column} END AS "${column.key}"` : `${column.column} AS "${column.key}"`)).join(', ')}, LEAST(n, ${MAX_STORED_COUNT})::bigint AS count FROM (
        SELECT s.*,
          ${sum('series_hour', 'hour', 'series_id', 's.id', 'h0', 'h1')}
          + ${sum('series_minute', 'minute', 'series_id', 's.id', 'm0', 'm1')}
          + ${sum('series_minute', 'minute', 'series_id', 's.id', 'm2', 'm3')} AS n
        FROM instances i JOIN series s ON s.instance_ref = i.id
        WHERE i.instance_id = @instance::text AND (@service::text IS NULL OR i.service = @service::text)
      ) AS t WHERE n > 0`);
    const flags = STEP_COLUMNS.map((column) => `c.${column.column}`).join(', ');
    this.steps = new Map(
      LEVELS.map((level) => [
        level.table,
        new NamedStatement(`
          SELECT ((@m0::bigint + ((b.${level.bucket} * ${level.minutes} - @m0::bigint) / @step::bigint) * @step::bigint) * ${MS_PER_MINUTE})::bigint AS "tMs",
                 c.kind AS kind, ${selected(STEP_COLUMNS, 'c.')}, ${safeSum('b.count')} AS count
          FROM cells c JOIN ${level.table} b ON b.cell_id = c.id AND b.${level.bucket} >= @b0::bigint AND b.${level.bucket} < @b1::bigint
          WHERE (c.kind = 0 OR c.extension_id = @extension::text)
            AND ((@service::text IS NULL AND c.scope = 1) OR (c.scope = 0 AND c.service = @service::text))
            AND (@client::text IS NULL OR c.client_name = @client::text)
          GROUP BY 1, c.kind, ${flags}`),
      ]),
    );
  }

  async cellTotals(query: CellQuery): Promise<CellTotals> {
    const byInstance = query.instance !== undefined;
    const plan = planBuckets(query.fromMs, query.toMs, { ...this.planOptions(), useDays: !byInstance });
    const parameters = { ...planParameters(plan), service: query.service ?? null, instance: query.instance ?? null };
    const rows = await (byInstance ? this.bySeries : this.byCell).all<Record<string, unknown>>(this.db, parameters);
    return { fromMs: plan.fromMs, toMs: plan.toMs, resolution: plan.resolution, cells: records<CellTotal>(rows, FLAG_COLUMNS) };
  }

  async stepTotals(query: StepQuery): Promise<StepTotal[]> {
    const step = query.stepMinutes;
    const level = LEVELS.find((candidate) => step % candidate.minutes === 0) ?? LEVELS[2];
    const m0 = Math.floor(query.fromMs / MS_PER_MINUTE);
    const m1 = Math.ceil(query.toMs / MS_PER_MINUTE);
    const rows = await (this.steps.get(level.table) as NamedStatement).all<Record<string, unknown>>(this.db, {
      m0,
      step,
      b0: Math.floor(m0 / level.minutes),
      b1: Math.ceil(m1 / level.minutes),
      extension: query.extensionId,
      service: query.service ?? null,
      client: query.clientName ?? null,
    });
    return records<StepTotal>(rows, STEP_COLUMNS);
  }
}
