import type { RollupLevel } from '../../common/rollup-levels.js';
import { DECLARATION } from '../../../../contract/index.js';
import type { TrendQuery, TrendResult } from '../../query/trends.js';
import { type TrendMeasure, TrendMeasures, planTrend, trendResult } from '../../common/trends.js';
import { type NamedStatement, type StatementRunner, preparedRead } from '../connection.js';
import { safeSum } from './sql.js';

/** The rows a trend sums: the cell rollups without an instance filter, that instance's series with one. */
function source(bySeries: boolean, level: RollupLevel): string {
  const slot = `((b.${level.bucket} * ${level.minutes} - @m0::bigint) / @step::bigint) AS slot`;
  const range = `b.${level.bucket} >= @b0::bigint AND b.${level.bucket} < @b1::bigint`;
  if (!bySeries) {
    return `SELECT ${slot}, c.*, b.count AS b_count FROM cells c JOIN ${level.table} b ON b.cell_id = c.id AND ${range}
      WHERE ((@service::text IS NULL AND c.scope = 1) OR (c.scope = 0 AND c.service = @service::text))`;
  }
  return `SELECT ${slot}, c.*, b.count AS b_count FROM series c JOIN instances i ON i.id = c.instance_ref JOIN ${level.table} b ON b.series_id = c.id AND ${range}
      WHERE (@service::text IS NULL OR i.service = @service::text) AND (@instance::text IS NULL OR i.instance_id = @instance::text)`;
}

const MEASURES = {
  declarations: {
    series: false,
    sql: (from: string) => `SELECT slot, client_declaration AS declaration, ${safeSum('b_count')} AS requests FROM (${from}) AS t
      WHERE kind = 0 AND (@client::text IS NULL OR client_name = @client::text) GROUP BY slot, client_declaration`,
  },
  clients: {
    series: false,
    sql: (from: string) => `SELECT slot, client_name AS name, client_version AS version, ${safeSum('b_count')} AS requests FROM (${from}) AS t
      WHERE kind = 0 AND (@client::text IS NULL OR client_name = @client::text) GROUP BY slot, client_name, client_version`,
  },
  extensions: {
    series: false,
    sql: (from: string) => `SELECT slot, kind, extension_id AS ext, client_declared AS cd, server_declared AS sd, negotiated AS ng, ${safeSum('b_count')} AS n
      FROM (${from}) AS t WHERE (@client::text IS NULL OR client_name = @client::text)
      GROUP BY slot, kind, extension_id, client_declared, server_declared, negotiated`,
  },
  // Requests answered before any server instance existed: only the series keep the server's declaration.
  serverUnknown: {
    series: true,
    sql: (from: string) => `SELECT slot, ${safeSum('b_count')} AS n FROM (${from}) AS t
      WHERE kind = 0 AND server_declaration = '${DECLARATION.unknown}' AND (@client::text IS NULL OR client_name = @client::text)
      GROUP BY slot`,
  },
  required: {
    series: true,
    sql: (
      from: string,
    ) => `SELECT slot, CASE WHEN kind = 0 THEN NULL ELSE extension_id END AS ext, client_name AS name, client_version AS version, ${safeSum('b_count')} AS count
      FROM (${from}) AS t WHERE ((kind = 1 AND required = 1 AND (@extension::text IS NULL OR extension_id = @extension::text)) OR (kind = 0 AND status_code = '-32021'))
        AND (@client::text IS NULL OR client_name = @client::text)
      GROUP BY 1, 2, client_name, client_version`,
  },
} as const;

/** Sums per time step over the rollups, from the coarsest level the step allows (common/trends.ts plans it and shapes the rows). */
export class TrendsReader extends TrendMeasures {
  private readonly statements = new Map<string, NamedStatement>();

  constructor(private readonly db: StatementRunner) {
    super();
  }

  protected async read<Slot>(measure: TrendMeasure, query: TrendQuery): Promise<TrendResult<Slot>> {
    // One statement, run to its end: a read whose asker has gone is not started.
    query.signal?.throwIfAborted();
    const bySeries = MEASURES[measure].series || query.instance !== undefined;
    const plan = planTrend(query, bySeries);
    const { level, m0, m1 } = plan;
    const key = `${measure}:${bySeries}:${level.table}`;
    let statement = this.statements.get(key);
    if (statement === undefined) {
      statement = preparedRead(MEASURES[measure].sql(source(bySeries, level)));
      this.statements.set(key, statement);
    }
    const rows = await statement.all<Slot>(this.db, {
      m0,
      step: query.stepMinutes,
      b0: m0 / level.minutes,
      b1: m1 / level.minutes,
      service: query.service ?? null,
      instance: query.instance ?? null,
      client: query.clientName ?? null,
      extension: query.extensionId ?? null,
    });
    return trendResult(query, plan, rows);
  }
}
