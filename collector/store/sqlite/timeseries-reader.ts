import type Database from 'better-sqlite3';
import type { TimeseriesPoint, TimeseriesQuery, TimeseriesResult } from '../store.js';
import { MS_PER_MINUTE } from './bucket-plan.js';

interface SlotRow {
  slot: number;
  kind: number;
  client_declared: number | null;
  server_declared: number | null;
  negotiated: number | null;
  n: number;
}

const LEVELS = [
  { table: 'cell_day', bucket: 'day', minutes: 1440 },
  { table: 'cell_hour', bucket: 'hour', minutes: 60 },
  { table: 'cell_minute', bucket: 'minute', minutes: 1 },
] as const;

/**
 * Request counts and one extension's counts per step, from the coarsest cell rollup the step allows. Steps are
 * aligned to the Unix epoch (UTC), and the range is widened to whole steps.
 */
export class TimeseriesReader {
  private readonly statements: Map<string, Database.Statement>;

  constructor(db: Database.Database) {
    this.statements = new Map(
      LEVELS.map((level) => [
        level.table,
        db.prepare(`
          SELECT CAST((b.${level.bucket} * ${level.minutes} - @m0) / @step AS INTEGER) AS slot,
                 c.kind, c.client_declared, c.server_declared, c.negotiated, sum(b.count) AS n
          FROM cells c JOIN ${level.table} b ON b.cell_id = c.id AND b.${level.bucket} >= @b0 AND b.${level.bucket} < @b1
          WHERE (c.kind = 0 OR c.extension_id = @extension)
            AND ((@service IS NULL AND c.scope = 1) OR (c.scope = 0 AND c.service = @service))
            AND (@client IS NULL OR c.client_name = @client)
          GROUP BY slot, c.kind, c.client_declared, c.server_declared, c.negotiated`),
      ]),
    );
  }

  read(query: TimeseriesQuery): TimeseriesResult {
    const step = query.stepMinutes;
    const level = LEVELS.find((candidate) => step % candidate.minutes === 0) ?? LEVELS[2];
    const m0 = Math.floor(query.fromMs / MS_PER_MINUTE / step) * step;
    const m1 = Math.max(m0 + step, Math.ceil(query.toMs / MS_PER_MINUTE / step) * step);
    const slots = (m1 - m0) / step;
    const points: TimeseriesPoint[] = Array.from({ length: slots }, (_, index) => ({
      tMs: (m0 + index * step) * MS_PER_MINUTE,
      requests: 0,
      clientDeclared: 0,
      serverAdvertised: 0,
      negotiated: 0,
    }));
    const rows = this.statements.get(level.table)?.all({
      m0,
      step,
      b0: m0 / level.minutes,
      b1: m1 / level.minutes,
      extension: query.extensionId,
      service: query.service ?? null,
      client: query.clientName ?? null,
    }) as SlotRow[];
    for (const row of rows) {
      const point = points[row.slot];
      if (point === undefined) continue;
      if (row.kind === 0) point.requests += row.n;
      else {
        if (row.client_declared === 1) point.clientDeclared += row.n;
        if (row.server_declared === 1) point.serverAdvertised += row.n;
        if (row.negotiated === 1) point.negotiated += row.n;
      }
    }
    return { fromMs: m0 * MS_PER_MINUTE, toMs: m1 * MS_PER_MINUTE, stepMinutes: step, points };
  }
}
