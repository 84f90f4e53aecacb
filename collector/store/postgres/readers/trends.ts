import { MS_PER_MINUTE } from '../../../model/time.js';
import type { ClientSlot, DeclarationSlot, ExtensionSlot, RequiredSlot, TrendQuery, TrendResult } from '../../trends.js';
import { NamedStatement, type Queryable } from '../connection.js';
import { safeSum } from './sql.js';

/** The rollup levels of each projection, coarsest first: the cells have a daily level, the series do not. */
const CELL_LEVELS = [
  { table: 'cell_day', bucket: 'day', minutes: 1440 },
  { table: 'cell_hour', bucket: 'hour', minutes: 60 },
  { table: 'cell_minute', bucket: 'minute', minutes: 1 },
] as const;
const SERIES_LEVELS = [
  { table: 'series_hour', bucket: 'hour', minutes: 60 },
  { table: 'series_minute', bucket: 'minute', minutes: 1 },
] as const;

type Level = (typeof CELL_LEVELS)[number] | (typeof SERIES_LEVELS)[number];

/** As in sqlite/readers/trends.ts: the cell rollups without an instance filter, that instance's series with one. */
function source(bySeries: boolean, level: Level): string {
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
  required: {
    series: true,
    sql: (from: string) => `SELECT slot, CASE WHEN kind = 0 THEN NULL ELSE extension_id END AS ext, client_name AS name, client_version AS version, ${safeSum('b_count')} AS count
      FROM (${from}) AS t WHERE ((kind = 1 AND required = 1 AND (@extension::text IS NULL OR extension_id = @extension::text)) OR (kind = 0 AND status_code = '-32021'))
        AND (@client::text IS NULL OR client_name = @client::text)
      GROUP BY 1, 2, client_name, client_version`,
  },
} as const;

type Measure = keyof typeof MEASURES;

interface FlagRow {
  slot: number;
  kind: number;
  ext: string | null;
  cd: number | null;
  sd: number | null;
  ng: number | null;
  n: number;
}

/** Sums per time step over the rollups, from the coarsest level the step allows (as sqlite/readers/trends.ts). */
export class TrendsReader {
  private readonly statements = new Map<string, NamedStatement>();

  constructor(private readonly db: Queryable) {}

  declarations(query: TrendQuery): Promise<TrendResult<DeclarationSlot>> {
    return this.read('declarations', query);
  }

  clients(query: TrendQuery): Promise<TrendResult<ClientSlot>> {
    return this.read('clients', query);
  }

  async extensions(query: TrendQuery): Promise<TrendResult<ExtensionSlot>> {
    const result = await this.read<FlagRow>('extensions', query);
    const rows = result.rows.map((row): ExtensionSlot =>
      row.kind === 0
        ? { slot: row.slot, id: null, clientDeclared: 0, serverAdvertised: 0, negotiated: 0, requests: row.n }
        : { slot: row.slot, id: row.ext, clientDeclared: row.cd === 1 ? row.n : 0, serverAdvertised: row.sd === 1 ? row.n : 0, negotiated: row.ng === 1 ? row.n : 0, requests: 0 },
    );
    return { ...result, rows };
  }

  async required(query: TrendQuery): Promise<TrendResult<RequiredSlot>> {
    const result = await this.read<RequiredSlot & { ext: string | null }>('required', query);
    return { ...result, rows: result.rows.map(({ ext, ...row }) => ({ ...row, id: ext })) };
  }

  private async read<Slot>(measure: Measure, query: TrendQuery): Promise<TrendResult<Slot>> {
    const bySeries = MEASURES[measure].series || query.instance !== undefined;
    const levels: readonly Level[] = bySeries ? SERIES_LEVELS : CELL_LEVELS;
    const step = query.stepMinutes;
    const level = levels.find((candidate) => step % candidate.minutes === 0) ?? CELL_LEVELS[2];
    const m0 = Math.floor(query.fromMs / MS_PER_MINUTE / step) * step;
    const m1 = Math.max(m0 + step, Math.ceil(query.toMs / MS_PER_MINUTE / step) * step);
    const key = `${measure}:${bySeries}:${level.table}`;
    let statement = this.statements.get(key);
    if (statement === undefined) {
      statement = new NamedStatement(MEASURES[measure].sql(source(bySeries, level)));
      this.statements.set(key, statement);
    }
    const rows = await statement.all<Slot>(this.db, {
      m0,
      step,
      b0: m0 / level.minutes,
      b1: m1 / level.minutes,
      service: query.service ?? null,
      instance: query.instance ?? null,
      client: query.clientName ?? null,
      extension: query.extensionId ?? null,
    });
    return { fromMs: m0 * MS_PER_MINUTE, toMs: m1 * MS_PER_MINUTE, stepMinutes: step, slots: (m1 - m0) / step, rows };
  }
}
