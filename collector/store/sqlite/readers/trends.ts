import type { RollupLevel } from '../../common/rollup-levels.js';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { DECLARATION } from '../../../../contract/index.js';
import type { TrendQuery, TrendResult } from '../../query/trends.js';
import { type TrendMeasure, TrendMeasures, planTrend, trendResult } from '../../common/trends.js';
import { safeSum } from '../sql.js';
import { READ_CHUNK } from './rollups.js';

/** Which cells or series a trend reads: one scope of the cells, or the series (of one instance, or every one). */
type Owners = 'allCells' | 'serviceCells' | 'series';

/**
 * Each owner set's condition, written so that SQLite seeks a range of ids within it (the chunk `@after` < id ≤
 * `@upto`): the cells by `cells_by_service` (scope, service, then id), one scope per statement. One statement for
 * both scopes would scan every cell of the scope for each chunk.
 */
const OWNERS: Record<Owners, string> = {
  allCells: 'c.scope = 1 AND c.service IS NULL',
  serviceCells: 'c.scope = 0 AND c.service = @service',
  series: '(@service IS NULL OR i.service = @service) AND (@instance IS NULL OR i.instance_id = @instance)',
};

/**
 * Without an instance filter the cell rollups (no instance dimension) are read; with one, that instance's
 * series. The `-32021` figures need `required` and `status_code`, which only the series keep.
 */
function source(owners: Owners, level: RollupLevel): string {
  // Parameters are bound as REAL: the division would give fractions without the cast.
  const slot = `CAST((b.${level.bucket} * ${level.minutes} - @m0) / @step AS INTEGER) AS slot`;
  const range = `b.${level.bucket} >= @b0 AND b.${level.bucket} < @b1`;
  if (owners !== 'series') {
    return `SELECT ${slot}, c.* FROM cells c JOIN ${level.table} b ON b.cell_id = c.id AND ${range}
      WHERE ${OWNERS[owners]} AND c.id > @after AND c.id <= @upto`;
  }
  return `SELECT ${slot}, c.* FROM series c JOIN instances i ON i.id = c.instance_ref JOIN ${level.table} b ON b.series_id = c.id AND ${range}
      WHERE c.id > @after AND c.id <= @upto AND ${OWNERS.series}`;
}

/** The series a `-32021` figure can come from: refused requests, and the ids a refused method required. */
const requiredSeries = (row = ''): string => `((${row}kind = 0 AND ${row}status_code = '-32021') OR (${row}kind = 1 AND ${row}required = 1))`;

/**
 * {@link source} narrowed to {@link requiredSeries}, from their ids: few among very many series, and no index
 * finds them (CROSS JOIN: SQLite keeps this order, from the few ids out). One read, no chunks.
 */
function requiredSource(level: RollupLevel): string {
  return `SELECT CAST((b.${level.bucket} * ${level.minutes} - @m0) / @step AS INTEGER) AS slot, c.*
      FROM temp.required_series r CROSS JOIN series c ON c.id = r.id CROSS JOIN instances i ON i.id = c.instance_ref
        JOIN ${level.table} b ON b.series_id = c.id AND b.${level.bucket} >= @b0 AND b.${level.bucket} < @b1
      WHERE (@service IS NULL OR i.service = @service) AND (@instance IS NULL OR i.instance_id = @instance)`;
}

const MEASURES = {
  declarations: {
    series: false,
    sql: (
      from: string,
    ) => `SELECT slot, client_declaration AS declaration, ${safeSum('b_count')} AS requests FROM (${from}) WHERE kind = 0 AND (@client IS NULL OR client_name = @client)
      GROUP BY slot, client_declaration`,
  },
  clients: {
    series: false,
    sql: (
      from: string,
    ) => `SELECT slot, client_name AS name, client_version AS version, ${safeSum('b_count')} AS requests FROM (${from}) WHERE kind = 0 AND (@client IS NULL OR client_name = @client)
      GROUP BY slot, client_name, client_version`,
  },
  // Grouped by the raw columns (the rollup rows are many; the groups few), shaped per id in `extensions()`.
  extensions: {
    series: false,
    sql: (from: string) => `SELECT slot, kind, extension_id AS ext, client_declared AS cd, server_declared AS sd, negotiated AS ng, ${safeSum('b_count')} AS n
      FROM (${from}) WHERE (@client IS NULL OR client_name = @client)
      GROUP BY slot, kind, extension_id, client_declared, server_declared, negotiated`,
  },
  // Requests answered before any server instance existed: only the series keep the server's declaration.
  serverUnknown: {
    series: true,
    sql: (from: string) => `SELECT slot, ${safeSum('b_count')} AS n FROM (${from})
      WHERE kind = 0 AND server_declaration = '${DECLARATION.unknown}' AND (@client IS NULL OR client_name = @client)
      GROUP BY slot`,
  },
  // `ext`, not `id`: the projection has the row's own `id` column, which a GROUP BY would take instead.
  required: {
    series: true,
    sql: (
      from: string,
    ) => `SELECT slot, CASE WHEN kind = 0 THEN NULL ELSE extension_id END AS ext, client_name AS name, client_version AS version, ${safeSum('b_count')} AS count
      FROM (${from}) WHERE ((kind = 1 AND required = 1 AND (@extension IS NULL OR extension_id = @extension)) OR (kind = 0 AND status_code = '-32021'))
        AND (@client IS NULL OR client_name = @client)
      GROUP BY slot, ext, client_name, client_version`,
  },
} as const;

/**
 * Sums per time step over the rollups, from the coarsest level the step allows. Read in chunks of
 * {@link READ_CHUNK} cells (or series) with a turn of the event loop between them, so that one trend over very
 * many cells does not hold up ingest or `/healthz`; a chunk's rows may repeat another's groups, and the
 * analysis adds them up.
 */
export class TrendsReader extends TrendMeasures {
  private readonly statements = new Map<string, Database.Statement>();
  private readonly chunkEnd: Record<Owners, Database.Statement>;

  constructor(private readonly db: Database.Database) {
    super();
    // Each chunk's end from the index alone, over the owners read (cells_by_service keeps equal keys in id order).
    const end = (where: string): Database.Statement =>
      db.prepare(`SELECT max(id) FROM (SELECT c.id FROM cells c WHERE ${where} AND c.id > @after ORDER BY c.id LIMIT ${READ_CHUNK})`).pluck();
    this.chunkEnd = {
      allCells: end(OWNERS.allCells),
      serviceCells: end(OWNERS.serviceCells),
      series: db.prepare(`SELECT max(id) FROM (SELECT id FROM series WHERE id > @after ORDER BY id LIMIT ${READ_CHUNK})`).pluck(),
    };
    // The ids of the series the `required` measure reads, in a table of this connection's own (TEMP: not part of the
    // schema, gone with the connection), filled once now and kept current by triggers as series come and go.
    db.exec(`
      CREATE TEMP TABLE IF NOT EXISTS required_series (id INTEGER PRIMARY KEY);
      INSERT OR IGNORE INTO temp.required_series (id) SELECT id FROM main.series WHERE ${requiredSeries()};
      CREATE TEMP TRIGGER IF NOT EXISTS required_series_added AFTER INSERT ON main.series WHEN ${requiredSeries('NEW.')}
        BEGIN INSERT OR IGNORE INTO temp.required_series (id) VALUES (NEW.id); END;
      CREATE TEMP TRIGGER IF NOT EXISTS required_series_dropped AFTER DELETE ON main.series
        BEGIN DELETE FROM temp.required_series WHERE id = OLD.id; END;
    `);
  }

  protected async read<Slot>(measure: TrendMeasure, query: TrendQuery): Promise<TrendResult<Slot>> {
    const bySeries = MEASURES[measure].series || query.instance !== undefined;
    const plan = planTrend(query, bySeries);
    const { level, m0, m1 } = plan;
    const narrowed = measure === 'required';
    const owners: Owners = bySeries ? 'series' : query.service === undefined ? 'allCells' : 'serviceCells';
    const key = `${measure}:${owners}:${level.table}`;
    let statement = this.statements.get(key);
    if (statement === undefined) {
      // `b.count` is renamed so that `c.*` (which has no `count`) and the rollup's count cannot clash.
      const from = (narrowed ? requiredSource(level) : source(owners, level)).replace('c.*', 'c.*, b.count AS b_count');
      statement = this.db.prepare(MEASURES[measure].sql(from));
      this.statements.set(key, statement);
    }
    const parameters = {
      m0,
      step: query.stepMinutes,
      b0: m0 / level.minutes,
      b1: m1 / level.minutes,
      service: query.service ?? null,
      instance: query.instance ?? null,
      client: query.clientName ?? null,
      ...(measure === 'required' ? { extension: query.extensionId ?? null } : {}),
    };
    const rows: Slot[] = [];
    if (narrowed) return trendResult(query, plan, statement.all(parameters) as Slot[]);
    const chunkEnd = this.chunkEnd[owners];
    for (let after = 0; ;) {
      const upto = chunkEnd.get({ after, ...(owners === 'serviceCells' ? { service: parameters.service } : {}) }) as number | null;
      if (upto === null) break;
      for (const row of statement.all({ ...parameters, after, upto }) as Slot[]) rows.push(row);
      after = upto;
      await yieldToEventLoop();
      query.signal?.throwIfAborted();
    }
    return trendResult(query, plan, rows);
  }
}
