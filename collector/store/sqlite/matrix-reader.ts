import type Database from 'better-sqlite3';
import type { ExtensionCounts, MatrixClient, MatrixQuery, MatrixResult } from '../store.js';
import { type PlanOptions, planBuckets, planParameters } from './bucket-plan.js';

/** One cell (or series) with its total over the range; the columns both projections share. */
interface TotalRow {
  kind: number;
  client_name: string | null;
  client_version: string | null;
  client_declaration: string | null;
  extension_id: string | null;
  client_declared: number | null;
  server_declared: number | null;
  negotiated: number | null;
  n: number;
}

const sum = (table: string, bucket: string, owner: string, id: string, from: string, to: string): string =>
  `(SELECT coalesce(sum(count), 0) FROM ${table} WHERE ${owner} = ${id} AND ${bucket} >= @${from} AND ${bucket} < @${to})`;

/**
 * The matrix. Without an instance filter it reads the cell rollups (no instance dimension, daily level for
 * long ranges): the all-services cells, or one service's. With an instance filter, that instance's series.
 * Either way one seek per bucket range per cell or series, so the cost follows their number, not the range.
 */
export class MatrixReader {
  private readonly byCell: Database.Statement;
  private readonly bySeries: Database.Statement;

  constructor(
    db: Database.Database,
    private readonly planOptions: () => Omit<PlanOptions, 'useDays'>,
  ) {
    this.byCell = db.prepare(`
      SELECT kind, client_name, client_version, client_declaration, extension_id, client_declared, server_declared, negotiated, n FROM (
        SELECT c.*,
          ${sum('cell_day', 'day', 'cell_id', 'c.id', 'd0', 'd1')}
          + ${sum('cell_hour', 'hour', 'cell_id', 'c.id', 'h0', 'h1')}
          + ${sum('cell_hour', 'hour', 'cell_id', 'c.id', 'h2', 'h3')}
          + ${sum('cell_minute', 'minute', 'cell_id', 'c.id', 'm0', 'm1')}
          + ${sum('cell_minute', 'minute', 'cell_id', 'c.id', 'm2', 'm3')} AS n
        FROM cells c
        WHERE (@service IS NULL AND c.scope = 1) OR (c.scope = 0 AND c.service = @service)
      ) WHERE n > 0`);
    this.bySeries = db.prepare(`
      SELECT kind, client_name, client_version, client_declaration, extension_id, client_declared, server_declared, negotiated, n FROM (
        SELECT s.*,
          ${sum('series_hour', 'hour', 'series_id', 's.id', 'h0', 'h1')}
          + ${sum('series_minute', 'minute', 'series_id', 's.id', 'm0', 'm1')}
          + ${sum('series_minute', 'minute', 'series_id', 's.id', 'm2', 'm3')} AS n
        FROM instances i JOIN series s ON s.instance_ref = i.id
        WHERE i.instance_id = @instance AND (@service IS NULL OR i.service = @service)
      ) WHERE n > 0`);
  }

  read(query: MatrixQuery): MatrixResult {
    const byInstance = query.instance !== undefined;
    const plan = planBuckets(query.fromMs, query.toMs, { ...this.planOptions(), useDays: !byInstance });
    const parameters = { ...planParameters(plan), service: query.service ?? null, instance: query.instance ?? null };
    const rows = (byInstance ? this.bySeries : this.byCell).all(parameters) as TotalRow[];
    return { fromMs: plan.fromMs, toMs: plan.toMs, resolution: plan.resolution, clients: aggregate(rows) };
  }
}

function aggregate(rows: readonly TotalRow[]): MatrixClient[] {
  const clients = new Map<string, MatrixClient>();
  for (const row of rows) {
    const key = JSON.stringify([row.client_name, row.client_version]);
    let client = clients.get(key);
    if (client === undefined) {
      client = {
        name: row.client_name,
        version: row.client_version,
        requests: 0,
        declaration: { unknown: 0, none: 0, declared: 0 },
        extensions: new Map(),
      };
      clients.set(key, client);
    }
    if (row.kind === 0) {
      client.requests += row.n;
      const state = row.client_declaration;
      if (state === 'unknown' || state === 'none' || state === 'declared') client.declaration[state] += row.n;
      continue;
    }
    const id = row.extension_id ?? '';
    let counts: ExtensionCounts | undefined = client.extensions.get(id);
    if (counts === undefined) client.extensions.set(id, (counts = { clientDeclared: 0, serverAdvertised: 0, negotiated: 0 }));
    if (row.client_declared === 1) counts.clientDeclared += row.n;
    if (row.server_declared === 1) counts.serverAdvertised += row.n;
    if (row.negotiated === 1) counts.negotiated += row.n;
  }
  return [...clients.values()];
}
