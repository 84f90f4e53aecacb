import { MS_PER_MINUTE } from '../../model/time.js';
import type { ClientSlot, DeclarationSlot, ExtensionSlot, RequiredSlot, TrendQuery, TrendReader, TrendResult } from '../query/trends.js';
import { CELL_LEVELS, type RollupLevel, SERIES_LEVELS, stepLevel } from './rollup-levels.js';

/*
 * What both backends share in reading trends: the rollup levels, the step plan, and the shaping of the rows
 * their SQL groups (the SQL itself differs by dialect).
 */

export interface TrendPlan {
  level: RollupLevel;
  /** The first and past-the-last minute read: whole steps since the epoch. */
  m0: number;
  m1: number;
}

/** The coarsest level the step allows, and the query's range widened to whole steps. */
export function planTrend(query: TrendQuery, bySeries: boolean): TrendPlan {
  const step = query.stepMinutes;
  const level = stepLevel(bySeries ? SERIES_LEVELS : CELL_LEVELS, step);
  const m0 = Math.floor(query.fromMs / MS_PER_MINUTE / step) * step;
  const m1 = Math.max(m0 + step, Math.ceil(query.toMs / MS_PER_MINUTE / step) * step);
  return { level, m0, m1 };
}

export function trendResult<Slot>(query: TrendQuery, plan: TrendPlan, rows: Slot[]): TrendResult<Slot> {
  const step = query.stepMinutes;
  return { fromMs: plan.m0 * MS_PER_MINUTE, toMs: plan.m1 * MS_PER_MINUTE, stepMinutes: step, slots: (plan.m1 - plan.m0) / step, rows };
}

/** The extensions trend as the SQL groups it: by the raw flag columns (the rollup rows are many, the groups few). */
interface ExtensionFlagRow {
  slot: number;
  kind: number;
  ext: string | null;
  cd: number | null;
  sd: number | null;
  ng: number | null;
  n: number;
}

/** Per id per step, plus the step's requests (`id` null) and, apart, those answered before any server instance existed. */
function extensionSlots(flags: readonly ExtensionFlagRow[], serverUnknown: readonly { slot: number; n: number }[]): ExtensionSlot[] {
  const rows = flags.map((row): ExtensionSlot =>
    row.kind === 0
      ? { slot: row.slot, id: null, clientDeclared: 0, serverAdvertised: 0, negotiated: 0, requests: row.n }
      : {
          slot: row.slot,
          id: row.ext,
          clientDeclared: row.cd === 1 ? row.n : 0,
          serverAdvertised: row.sd === 1 ? row.n : 0,
          negotiated: row.ng === 1 ? row.n : 0,
          requests: 0,
        },
  );
  for (const row of serverUnknown)
    rows.push({ slot: row.slot, id: null, clientDeclared: 0, serverAdvertised: 0, negotiated: 0, requests: 0, serverUnknown: row.n });
  return rows;
}

/** `ext`, not `id`, in the SQL: the projection has the row's own `id` column, which a GROUP BY would take instead. */
function requiredSlots(rows: readonly (RequiredSlot & { ext: string | null })[]): RequiredSlot[] {
  return rows.map(({ ext, ...row }) => ({ ...row, id: ext }));
}

/** What each backend's SQL sums per step: one query per measure (`serverUnknown` goes with `extensions`). */
export type TrendMeasure = 'declarations' | 'clients' | 'extensions' | 'serverUnknown' | 'required';

/**
 * The four trends as both backends answer them, over the one query per measure each backend runs
 * ({@link TrendMeasures.read}): the rows are shaped here, once.
 */
export abstract class TrendMeasures implements TrendReader {
  protected abstract read<Slot>(measure: TrendMeasure, query: TrendQuery): Promise<TrendResult<Slot>>;

  declarationTrend(query: TrendQuery): Promise<TrendResult<DeclarationSlot>> {
    return this.read('declarations', query);
  }

  clientTrend(query: TrendQuery): Promise<TrendResult<ClientSlot>> {
    return this.read('clients', query);
  }

  async extensionTrend(query: TrendQuery): Promise<TrendResult<ExtensionSlot>> {
    const result = await this.read<ExtensionFlagRow>('extensions', query);
    const unknown = await this.read<{ slot: number; n: number }>('serverUnknown', query);
    return { ...result, rows: extensionSlots(result.rows, unknown.rows) };
  }

  async requiredTrend(query: TrendQuery): Promise<TrendResult<RequiredSlot>> {
    const result = await this.read<RequiredSlot & { ext: string | null }>('required', query);
    return { ...result, rows: requiredSlots(result.rows) };
  }
}
