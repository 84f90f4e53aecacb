import { CELL_LEVELS, SERIES_LEVELS, stepLevel } from '../../common/rollup-levels.js';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { DECLARATION } from '../../../../contract/index.js';
import type { CellTotal, CellTotals, InstanceCellTotal, InstanceCellTotals, StepTotal } from '../../../model/records.js';
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
import { type CellQuery, type HistoryQuery, type InstanceCellQuery, type StepQuery, needsClients } from '../../query/filters.js';
import { historyStartMs, stepParameters } from '../../common/queries.js';
import { type ClosedBuckets, READ_CLOSED_BUCKETS, closedBucketsOf } from '../../common/closed-buckets.js';
import { CELL_COLUMNS, type DimColumn, INSTANCE_CELL_COLUMNS, INSTANCE_CELL_TABLE_COLUMNS, MAX_STORED_COUNT, unbound } from '../../common/columns.js';
import { safeSum } from '../sql.js';

const sum = (table: string, bucket: string, owner: string, id: string, from: string, to: string): string =>
  `(SELECT ${safeSum('count')} FROM ${table} WHERE ${owner} = ${id} AND ${bucket} >= @${from} AND ${bucket} < @${to})`;

/**
 * A statement summing each row's counts over a plan's ranges, prepared once per combination of non-empty ranges: an
 * empty range would still cost a seek per row, and most plans have two or three of five.
 */
class RangeSums {
  private readonly prepared = new Map<string, Database.Statement>();

  constructor(
    private readonly ranges: readonly PlanRange[],
    /** The id the sums belong to (`c.id`, `s.id`) and the statement around `n`, their total. */
    private readonly owner: { column: string; id: string },
    private readonly build: (n: string) => Database.Statement,
  ) {}

  for(parameters: Record<string, unknown>): Database.Statement {
    const present = presentRanges(this.ranges, parameters);
    const key = present.map(([, , from]) => from).join();
    let statement = this.prepared.get(key);
    if (statement === undefined) {
      const terms = present.map(([table, bucket, from, to]) => sum(table, bucket, this.owner.column, this.owner.id, from, to));
      statement = this.build(terms.length === 0 ? '0' : terms.join('\n          + '));
      this.prepared.set(key, statement);
    }
    return statement;
  }
}

const FLAG_COLUMNS = CELL_COLUMNS.filter((column) => column.flag);
const INSTANCE_FLAG_COLUMNS = INSTANCE_CELL_COLUMNS.filter((column) => column.flag);
/** A series' cell columns, extension series without their declaration state (as their cells). */
const SERIES_CELL_COLUMNS = CELL_COLUMNS.map((column) =>
  column.key === 'clientDeclaration' ? `CASE WHEN kind = 0 THEN ${column.column} END AS ${column.key}` : `${column.column} AS ${column.key}`,
).join(', ');
const STEP_COLUMNS = FLAG_COLUMNS;

/**
 * Cells (or series) summed per statement run: a few milliseconds of work, after which the read yields to the event
 * loop, so that one matrix over millions of cells never holds up ingest or `/healthz` for longer than that.
 */
export const READ_CHUNK = 1000;
/** Listed instances read per statement run: a few dozen instance cells each, about a chunk's worth. */
const LISTED_CHUNK = 32;

/** `column AS key`: rows come back keyed as the records are. */
const selected = (columns: readonly DimColumn[], table = ''): string => columns.map((column) => `${table}${column.column} AS ${column.key}`).join(', ');

/**
 * Rows selected with their columns named as the record's keys become the records themselves, once their flags
 * (stored 0/1) are booleans: no per-row copy, which thousands of rows per matrix read would feel.
 */
function records<T>(rows: Record<string, unknown>[], flags: readonly DimColumn[]): T[] {
  for (const row of rows) for (const column of flags) row[column.key] = unbound(column, row[column.key]);
  return rows as T[];
}

/**
 * Instance cells read from the hour out: how many rows hours hold (up to `@cap`), where a chunk of an hour's ids ends,
 * and per read the statement and how many seeks the same read from the instances out makes.
 */
interface HourFirstRead {
  rows: Database.Statement;
  end: Database.Statement;
  requests: { cells: Database.Statement; seeks: Database.Statement };
  listed: { cells: Database.Statement; seeks: Database.Statement };
}

/**
 * One chunk's rows (`@after` < id ≤ `@upto`), and where a chunk of {@link READ_CHUNK} ids from `@after` ends. `json`:
 * the statement answers the chunk's rows as one JSON value ({@link JsonRows}), the rows' keys in its order.
 */
interface ChunkedRead {
  rows: RangeSums;
  end: Database.Statement;
  json?: readonly string[];
}

/**
 * A statement's rows as one value, a JSON array of arrays of `columns` (each `[key, expression]`): the driver builds
 * an object per row one property at a time, which a read of tens of thousands of cells felt (about a third of the
 * 7-day matrix's first read on a fleet of 83,101 cells); parsing the array is cheaper. Arrays rather than objects:
 * SQLite writes no key per value, and the parse reads none (that read's closed part, 83,101 cells, took about a tenth
 * less CPU, the objects built here included).
 */
class JsonRows {
  readonly keys: readonly string[];
  readonly sql: string;

  constructor(columns: readonly (readonly [key: string, expression: string])[]) {
    this.keys = columns.map(([key]) => key);
    this.sql = `json_group_array(json_array(${columns.map(([, expression]) => expression).join(', ')}))`;
  }
}

/** The rows of a {@link JsonRows} value, each an object keyed as the statement's columns. */
function parsedRows(value: string, keys: readonly string[]): Record<string, unknown>[] {
  return (JSON.parse(value) as unknown[][]).map((values) => {
    const row: Record<string, unknown> = {};
    for (let index = 0; index < keys.length; index++) row[keys[index] as string] = values[index];
    return row;
  });
}

async function chunked<T extends CellTotal>(
  read: ChunkedRead,
  parameters: Record<string, unknown>,
  into: T[],
  signal: AbortSignal | undefined,
  flags: readonly DimColumn[] = FLAG_COLUMNS,
): Promise<void> {
  let after = 0;
  for (;;) {
    const upto = read.end.get({ ...parameters, after }) as number | null;
    if (upto === null) return;
    const statement = read.rows.for(parameters);
    const chunk = { ...parameters, after, upto };
    const rows = read.json === undefined ? (statement.all(chunk) as Record<string, unknown>[]) : parsedRows(statement.get(chunk) as string, read.json);
    for (const cell of records<T>(rows, flags)) into.push(cell);
    after = upto;
    await yieldToEventLoop();
    signal?.throwIfAborted();
  }
}

/**
 * The rollup reads: totals per matrix cell over a range, and per step. Without an instance filter the cell
 * rollups are read (no instance dimension, a daily level for long ranges): the all-services cells, or one
 * service's. With an instance filter, that instance's series. Either way one seek per bucket range per cell or
 * series, so the cost follows their number, not the range's length.
 */
export class RollupsReader {
  private readonly allCells: ChunkedRead;
  private readonly serviceCells: ChunkedRead;
  private readonly instanceRefs: Database.Statement;
  private readonly instanceSeries: ChunkedRead;
  private readonly perInstance: ChunkedRead;
  private readonly instanceCells: ChunkedRead;
  private readonly requestCells: ChunkedRead;
  private readonly listedInstanceCells: RangeSums;
  private readonly hourFirst: HourFirstRead;
  private readonly steps: { all: Map<string, Database.Statement>; service: Map<string, Database.Statement> };
  private readonly unknownCells: RangeSums;
  private readonly unknownSteps: Map<string, Database.Statement>;
  private readonly latestPointEnd: Database.Statement;
  private readonly oldest: { minute: Database.Statement; hour: Database.Statement };
  private readonly closed: Database.Statement;

  constructor(
    db: Database.Database,
    private readonly planOptions: () => Omit<PlanOptions, 'useDays'>,
  ) {
    // Each cell's sum is computed once: with its OFFSET the subquery is not flattened into the query around it (which
    // would seek every range again for the count of each row that passes `n > 0`), and it carries the id alone, so the
    // cells whose sum is zero (most of them in a short range) cost no copy of their columns.
    const cellRows = new JsonRows([
      ['cellId', 't.id'],
      ['kind', 'kind'],
      ...CELL_COLUMNS.map((column) => [column.key, column.column] as const),
      ['count', `min(t.n, ${MAX_STORED_COUNT})`],
    ]);
    const byCell = (where: string): RangeSums =>
      new RangeSums(CELL_RANGES, { column: 'cell_id', id: 'c.id' }, (n) =>
        db
          .prepare(
            `
      SELECT ${cellRows.sql} FROM (
        SELECT c.id, ${n} AS n
        FROM cells c
        WHERE ${where} AND c.id > @after AND c.id <= @upto
        LIMIT -1 OFFSET 0
      ) AS t CROSS JOIN cells ON cells.id = t.id WHERE t.n > 0`,
          )
          .pluck(),
      );
    // Each chunk's end first, from the index alone (cells_by_service keeps equal keys in id order).
    const chunkEnd = (where: string): Database.Statement =>
      db.prepare(`SELECT max(id) FROM (SELECT c.id FROM cells c WHERE ${where} AND c.id > @after ORDER BY c.id LIMIT ${READ_CHUNK})`).pluck();
    const ALL = 'c.scope = 1 AND c.service IS NULL';
    const ONE = 'c.scope = 0 AND c.service = @service';
    this.allCells = { rows: byCell(ALL), end: chunkEnd(ALL), json: cellRows.keys };
    this.serviceCells = { rows: byCell(ONE), end: chunkEnd(ONE), json: cellRows.keys };
    this.instanceRefs = db.prepare('SELECT id FROM instances WHERE instance_id = @instance AND (@service IS NULL OR service = @service)').pluck();
    // A series has every cell column (and more); extension series keep their declaration state, which a
    // cell of theirs does not: it is left out here too.
    const seriesSums = (build: (n: string) => Database.Statement): RangeSums => new RangeSums(SERIES_RANGES, { column: 'series_id', id: 's.id' }, build);
    this.instanceSeries = {
      rows: seriesSums((n) =>
        db.prepare(`
      SELECT kind, ${SERIES_CELL_COLUMNS}, min(n, ${MAX_STORED_COUNT}) AS count FROM (
        SELECT s.*, ${n} AS n
        FROM series s
        WHERE s.instance_ref = @ref AND s.id > @after AND s.id <= @upto
      ) WHERE n > 0`),
      ),
      end: db.prepare(`SELECT max(id) FROM (SELECT id FROM series WHERE instance_ref = @ref AND id > @after ORDER BY id LIMIT ${READ_CHUNK})`).pluck(),
    };
    // Every instance's series, each with its service and instance id (and the server's declaration and `-32021`
    // flag, which only the series keep), narrowed by instance, service and client name.
    const perInstanceWhere = `(@instance IS NULL OR i.instance_id = @instance) AND (@service IS NULL OR i.service = @service) AND (@client IS NULL OR s.client_name = @client)`;
    this.perInstance = {
      rows: seriesSums((n) =>
        db.prepare(`
      SELECT kind, ${INSTANCE_CELL_COLUMNS.map((column) => (column.key === 'clientDeclaration' ? `CASE WHEN kind = 0 THEN ${column.column} END AS ${column.key}` : `${column.column} AS ${column.key}`)).join(', ')},
             service_name AS service, instance_name AS instanceId, build_name AS build, instance_ref AS instanceRef, min(n, ${MAX_STORED_COUNT}) AS count FROM (
        SELECT s.*, i.service AS service_name, i.instance_id AS instance_name, i.build_key AS build_name, ${n} AS n
        FROM series s JOIN instances i ON i.id = s.instance_ref
        WHERE ${perInstanceWhere} AND s.id > @after AND s.id <= @upto
      ) WHERE n > 0`),
      ),
      end: db
        .prepare(
          `SELECT max(id) FROM (SELECT s.id FROM series s JOIN instances i ON i.id = s.instance_ref WHERE ${perInstanceWhere} AND s.id > @after ORDER BY s.id LIMIT ${READ_CHUNK})`,
        )
        .pluck(),
    };
    // Every instance cell, with its service and instance id, narrowed by instance and service: the clients summed.
    // CROSS JOIN: from the chunk's range of instance cell ids out (SQLite would otherwise loop over the instances and
    // look through every instance cell of each for every chunk).
    const instanceCellWhere = '(@instance IS NULL OR i.instance_id = @instance) AND (@service IS NULL OR i.service = @service)';
    const instanceCellColumns = INSTANCE_CELL_COLUMNS.map((column) =>
      INSTANCE_CELL_TABLE_COLUMNS.includes(column) ? `${column.column} AS ${column.key}` : `NULL AS ${column.key}`,
    ).join(', ');
    const instanceCellSums = (from: string, where: string): RangeSums =>
      new RangeSums(INSTANCE_CELL_RANGES, { column: 'instance_cell_id', id: 'c.id' }, (n) =>
        db.prepare(`
      SELECT kind, ${instanceCellColumns}, service_name AS service, instance_name AS instanceId, build_name AS build, instance_ref AS instanceRef,
             min(n, ${MAX_STORED_COUNT}) AS count FROM (
        SELECT c.*, i.service AS service_name, i.instance_id AS instance_name, i.build_key AS build_name, ${n} AS n
        FROM ${from}
        WHERE ${instanceCellWhere} AND ${where}
      ) WHERE n > 0`),
      );
    this.instanceCells = {
      rows: instanceCellSums('instance_cells c CROSS JOIN instances i ON i.id = c.instance_ref', 'c.id > @after AND c.id <= @upto'),
      end: db
        .prepare(
          `SELECT max(id) FROM (SELECT c.id FROM instance_cells c CROSS JOIN instances i ON i.id = c.instance_ref WHERE ${instanceCellWhere} AND c.id > @after ORDER BY c.id LIMIT ${READ_CHUNK})`,
        )
        .pluck(),
    };
    // The request cells alone, from a chunk of instances out: the identity index finds each instance's by its id and kind.
    this.requestCells = {
      rows: instanceCellSums('instances i CROSS JOIN instance_cells c ON c.instance_ref = i.id AND c.kind = 0', 'i.id > @after AND i.id <= @upto'),
      end: db
        .prepare(`SELECT max(id) FROM (SELECT i.id FROM instances i WHERE ${instanceCellWhere} AND i.id > @after ORDER BY i.id LIMIT ${READ_CHUNK})`)
        .pluck(),
    };
    // The cells of listed instances (a JSON array of their ids), from each instance out.
    this.listedInstanceCells = instanceCellSums(
      'json_each(@refs) r CROSS JOIN instances i ON i.id = r.value CROSS JOIN instance_cells c ON c.instance_ref = i.id',
      '1',
    );
    // The same reads from the hour out (migration 12's index), for the open part of a long range: only the instance
    // cells active in it. Each hour in chunks of instance cell ids, as the index orders them.
    const hourCells = (where: string): Database.Statement =>
      db.prepare(`
      SELECT c.kind AS kind, ${INSTANCE_CELL_COLUMNS.map((column) =>
        INSTANCE_CELL_TABLE_COLUMNS.includes(column) ? `c.${column.column} AS ${column.key}` : `NULL AS ${column.key}`,
      ).join(', ')},
             i.service AS service, i.instance_id AS instanceId, i.build_key AS build, c.instance_ref AS instanceRef, c.id AS cellRef, h.count AS count
      FROM instance_cell_hour h CROSS JOIN instance_cells c ON c.id = h.instance_cell_id CROSS JOIN instances i ON i.id = c.instance_ref
      WHERE h.hour = @hour AND h.instance_cell_id > @after AND h.instance_cell_id <= @upto AND h.count > 0 AND ${instanceCellWhere} AND ${where}`);
    this.hourFirst = {
      rows: db.prepare('SELECT count(*) FROM (SELECT 1 FROM instance_cell_hour WHERE hour >= @from AND hour < @to LIMIT @cap)').pluck(),
      end: db
        .prepare(
          `SELECT max(instance_cell_id) FROM (SELECT instance_cell_id FROM instance_cell_hour WHERE hour = @hour AND instance_cell_id > @after ORDER BY instance_cell_id LIMIT ${READ_CHUNK})`,
        )
        .pluck(),
      requests: {
        cells: hourCells('c.kind = 0'),
        seeks: db.prepare(`SELECT count(*) FROM instances i WHERE ${instanceCellWhere}`).pluck(),
      },
      listed: {
        cells: hourCells('c.instance_ref IN (SELECT value FROM json_each(@refs))'),
        seeks: db.prepare('SELECT count(*) FROM json_each(@refs) r CROSS JOIN instance_cells c ON c.instance_ref = r.value').pluck(),
      },
    };
    // Requests answered before any server instance existed: the cells do not keep the server's declaration, the
    // series do. There are few such series (answers no server saw) among very many, and no index finds them, so this
    // connection keeps their ids in a table of its own (TEMP: not part of the schema, gone with the connection),
    // filled once now and kept current by triggers as series are created and dropped.
    db.exec(`
      CREATE TEMP TABLE IF NOT EXISTS server_unknown_series (id INTEGER PRIMARY KEY);
      INSERT OR IGNORE INTO temp.server_unknown_series (id) SELECT id FROM main.series WHERE server_declaration = '${DECLARATION.unknown}';
      CREATE TEMP TRIGGER IF NOT EXISTS server_unknown_series_added AFTER INSERT ON main.series WHEN NEW.server_declaration = '${DECLARATION.unknown}'
        BEGIN INSERT OR IGNORE INTO temp.server_unknown_series (id) VALUES (NEW.id); END;
      CREATE TEMP TRIGGER IF NOT EXISTS server_unknown_series_dropped AFTER DELETE ON main.series WHEN OLD.server_declaration = '${DECLARATION.unknown}'
        BEGIN DELETE FROM temp.server_unknown_series WHERE id = OLD.id; END;
    `);
    // CROSS JOIN: SQLite keeps this order, from the few ids out (it would otherwise scan the series).
    const unknownSeries = 'temp.server_unknown_series u CROSS JOIN series s ON s.id = u.id CROSS JOIN instances i ON i.id = s.instance_ref';
    this.unknownCells = seriesSums((n) =>
      db.prepare(`
      SELECT kind, ${SERIES_CELL_COLUMNS}, min(n, ${MAX_STORED_COUNT}) AS count FROM (
        SELECT s.*, ${n} AS n
        FROM ${unknownSeries}
        WHERE (@instance IS NULL OR i.instance_id = @instance) AND (@service IS NULL OR i.service = @service)
      ) WHERE n > 0`),
    );
    this.unknownSteps = new Map(
      SERIES_LEVELS.map((level) => [
        level.table,
        db.prepare(`
          SELECT CAST(@m0 + CAST((b.${level.bucket} * ${level.minutes} - @m0) / @step AS INTEGER) * @step AS INTEGER) * ${MS_PER_MINUTE} AS tMs,
                 s.kind AS kind, ${selected(STEP_COLUMNS, 's.')}, ${safeSum('b.count')} AS count
          FROM ${unknownSeries}
            JOIN ${level.table} b ON b.series_id = s.id AND b.${level.bucket} >= @b0 AND b.${level.bucket} < @b1
          WHERE (s.kind = 0 OR s.extension_id = @extension)
            AND (@service IS NULL OR i.service = @service)
            AND (@client IS NULL OR s.client_name = @client)
          GROUP BY tMs, s.kind, ${STEP_COLUMNS.map((column) => `s.${column.column}`).join(', ')}`),
      ]),
    );
    // From the log's identity index: one seek. Increments written to the rollups another way (the benchmarks' loader)
    // are not in the log, and are not ahead of their writer's clock.
    this.latestPointEnd = db.prepare('SELECT max(end_ns) FROM point_log').pluck().safeIntegers(true);
    // One seek per cell into each rollup's primary key (cell, bucket): no index orders the buckets alone.
    const oldestOf = (table: string, bucket: string): Database.Statement =>
      db
        .prepare(
          `
        SELECT min(b) FROM (SELECT (SELECT min(${bucket}) FROM ${table} WHERE cell_id = c.id) AS b FROM cells c
        WHERE (@service IS NULL AND c.scope = 1 AND c.service IS NULL) OR (c.scope = 0 AND c.service = @service))`,
        )
        .pluck();
    this.oldest = { minute: oldestOf('cell_minute', 'minute'), hour: oldestOf('cell_hour', 'hour') };
    this.closed = db.prepare(READ_CLOSED_BUCKETS);
    const flags = STEP_COLUMNS.map((column) => `c.${column.column}`).join(', ');
    // One statement per scope, so that each chunk seeks its range of ids in cells_by_service (one for both scopes
    // would scan every cell of the scope for each chunk).
    const stepsOf = (where: string): Map<string, Database.Statement> =>
      new Map(
        CELL_LEVELS.map((level) => [
          level.table,
          db.prepare(`
          SELECT CAST(@m0 + CAST((b.${level.bucket} * ${level.minutes} - @m0) / @step AS INTEGER) * @step AS INTEGER) * ${MS_PER_MINUTE} AS tMs,
                 c.kind AS kind, ${selected(STEP_COLUMNS, 'c.')}, ${safeSum('b.count')} AS count
          FROM cells c JOIN ${level.table} b ON b.cell_id = c.id AND b.${level.bucket} >= @b0 AND b.${level.bucket} < @b1
          WHERE ${where} AND c.id > @after AND c.id <= @upto AND (c.kind = 0 OR c.extension_id = @extension)
            AND (@client IS NULL OR c.client_name = @client)
          GROUP BY tMs, c.kind, ${flags}`),
        ]),
      );
    this.steps = { all: stepsOf(ALL), service: stepsOf(ONE) };
  }

  /**
   * Read in chunks of cells (or series) with a turn of the event loop between them. Each chunk sees what was
   * committed when it ran: everything applied before the read began, and perhaps some of what came during it.
   */
  async cellTotals(query: CellQuery): Promise<CellTotals> {
    const byInstance = query.instance !== undefined;
    const plan = this.plan(query, !byInstance);
    const parameters = { ...planParameters(plan), service: query.service ?? null, instance: query.instance ?? null };
    const cells: CellTotal[] = [];
    if (byInstance) {
      for (const ref of this.instanceRefs.all(parameters) as number[]) await chunked(this.instanceSeries, { ...parameters, ref }, cells, query.signal);
    } else {
      await chunked(query.service === undefined ? this.allCells : this.serviceCells, parameters, cells, query.signal);
    }
    // The same range from the series rollups (no daily level: the same buckets, split differently).
    const seriesPlan = byInstance ? plan : this.plan(query, false);
    const unknownParameters = { ...planParameters(seriesPlan), service: query.service ?? null, instance: query.instance ?? null };
    const serverUnknown = records<CellTotal>(this.unknownCells.for(unknownParameters).all(unknownParameters) as Record<string, unknown>[], FLAG_COLUMNS);
    return { fromMs: plan.fromMs, toMs: plan.toMs, resolution: plan.resolution, cells, serverUnknown };
  }

  /**
   * The buckets for a range. Its end may be read from the day or hour under way ({@link PlanOptions.nowMs}) only while
   * nothing is stored after the minute under way: a point dated ahead of this clock (another host's), until its
   * minute has come, would otherwise count in a range that ends now.
   */
  private plan(range: { fromMs: number; toMs: number }, useDays: boolean): BucketPlan {
    const { nowMs, ...options } = this.planOptions();
    const latest = this.latestPointEnd.get() as bigint | null;
    const aheadOfNow = nowMs === undefined || (latest !== null && Number(latest / NANOS_PER_MINUTE) > Math.floor(nowMs / MS_PER_MINUTE));
    return planBuckets(range.fromMs, range.toMs, { ...options, useDays, nowMs: aheadOfNow ? undefined : nowMs });
  }

  closedBuckets(): ClosedBuckets {
    const row = this.closed.get() as { generation: unknown; openHour: unknown };
    return closedBucketsOf(row.generation, row.openHour);
  }

  /** The start of the oldest minute the matrix rollups hold (all services, or one service's); null when none. */
  historyStart(query: HistoryQuery): number | null {
    const parameters = { service: query.service ?? null };
    return historyStartMs(this.oldest.minute.get(parameters) as number | null, this.oldest.hour.get(parameters) as number | null);
  }

  /**
   * Per instance, in chunks as {@link cellTotals}: from the instance cells' rollups (a daily level), or, when the
   * clients are asked for, from the series rollups (no daily level). The request cells alone and the listed instances'
   * are read from the instances out, a chunk of instances at a time.
   */
  async instanceCellTotals(query: InstanceCellQuery): Promise<InstanceCellTotals> {
    const bySeries = needsClients(query);
    const plan = this.plan(query, !bySeries);
    const parameters = { ...planParameters(plan), service: query.service ?? null, instance: query.instance ?? null, client: query.clientName ?? null };
    const cells: InstanceCellTotal[] = [];
    const hours = bySeries ? undefined : onlyHours(plan);
    const hourRead =
      hours === undefined
        ? undefined
        : query.instanceRefs !== undefined
          ? this.hourFirst.listed
          : query.requestsOnly === true
            ? this.hourFirst.requests
            : undefined;
    if (hours !== undefined && hourRead !== undefined) {
      const withRefs = query.instanceRefs === undefined ? parameters : { ...parameters, refs: JSON.stringify(query.instanceRefs) };
      // From the hour out when it holds fewer rows than the instances' cells would be seeks: the open hour, in a fleet
      // of which a few instances are active at a time. One seek per instance cell otherwise, as any other range.
      const seeks = hourRead.seeks.get(withRefs) as number;
      if ((this.hourFirst.rows.get({ ...hours, cap: seeks }) as number) < seeks) {
        return {
          fromMs: plan.fromMs,
          toMs: plan.toMs,
          resolution: plan.resolution,
          cells: await this.fromHours(hourRead.cells, hours, withRefs, query.signal),
        };
      }
    }
    if (!bySeries && query.instanceRefs !== undefined) {
      for (let start = 0; start < query.instanceRefs.length; start += LISTED_CHUNK) {
        const refs = JSON.stringify(query.instanceRefs.slice(start, start + LISTED_CHUNK));
        const rows = this.listedInstanceCells.for(parameters).all({ ...parameters, refs }) as Record<string, unknown>[];
        for (const cell of records<InstanceCellTotal>(rows, INSTANCE_FLAG_COLUMNS)) cells.push(cell);
        await yieldToEventLoop();
        query.signal?.throwIfAborted();
      }
    } else {
      const read = bySeries ? this.perInstance : query.requestsOnly === true ? this.requestCells : this.instanceCells;
      await chunked(read, parameters, cells, query.signal, INSTANCE_FLAG_COLUMNS);
    }
    return { fromMs: plan.fromMs, toMs: plan.toMs, resolution: plan.resolution, cells };
  }

  /**
   * Instance cell totals over `hours` from the hour out: each hour's rows in chunks of instance cell ids (a turn of the
   * event loop between them), a cell active in several hours summed into one total.
   */
  private async fromHours(
    statement: Database.Statement,
    hours: { from: number; to: number },
    parameters: Record<string, unknown>,
    signal: AbortSignal | undefined,
  ): Promise<InstanceCellTotal[]> {
    const byCell = new Map<number, InstanceCellTotal>();
    for (let hour = hours.from; hour < hours.to; hour++) {
      for (let after = 0; ;) {
        const upto = this.hourFirst.end.get({ hour, after }) as number | null;
        if (upto === null) break;
        const rows = statement.all({ ...parameters, hour, after, upto }) as Record<string, unknown>[];
        for (const { cellRef, ...row } of rows) {
          const [cell] = records<InstanceCellTotal>([row], INSTANCE_FLAG_COLUMNS) as [InstanceCellTotal];
          const seen = byCell.get(cellRef as number);
          if (seen === undefined) byCell.set(cellRef as number, cell);
          else seen.count = Math.min(seen.count + cell.count, MAX_STORED_COUNT);
        }
        after = upto;
        await yieldToEventLoop();
        signal?.throwIfAborted();
      }
    }
    return [...byCell.values()];
  }

  /** The part of {@link stepTotals} answered before any server instance existed, from the coarsest series rollup the step allows. */
  serverUnknownStepTotals(query: StepQuery): StepTotal[] {
    const level = stepLevel(SERIES_LEVELS, query.stepMinutes);
    return this.stepRows(this.unknownSteps.get(level.table), level.minutes, query);
  }

  /**
   * From the coarsest cell rollup the step allows; `fromMs` and `toMs` are whole steps since the epoch. In chunks
   * of cells, as {@link cellTotals}: a step may come back in several rows, which the analysis adds up.
   */
  async stepTotals(query: StepQuery): Promise<StepTotal[]> {
    const level = stepLevel(CELL_LEVELS, query.stepMinutes);
    const cells = query.service === undefined ? { read: this.allCells, steps: this.steps.all } : { read: this.serviceCells, steps: this.steps.service };
    const totals: StepTotal[] = [];
    for (let after = 0; ;) {
      const upto = cells.read.end.get({ after, service: query.service ?? null }) as number | null;
      if (upto === null) return totals;
      for (const total of this.stepRows(cells.steps.get(level.table), level.minutes, query, { after, upto })) totals.push(total);
      after = upto;
      await yieldToEventLoop();
      query.signal?.throwIfAborted();
    }
  }

  private stepRows(
    statement: Database.Statement | undefined,
    minutes: number,
    query: StepQuery,
    chunk: { after: number; upto: number } | undefined = undefined,
  ): StepTotal[] {
    const rows = statement?.all({ ...stepParameters(query, minutes), ...chunk }) as Record<string, unknown>[];
    return records<StepTotal>(rows, STEP_COLUMNS);
  }
}
