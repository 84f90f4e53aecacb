import type { CellQuery, RollupReader } from '../store/store.js';
import { type Grouping, type MatrixLimits, type MatrixView, buildMatrix } from './matrix.js';

export type MatrixSource = Pick<RollupReader, 'cellTotals' | 'requiredTrend'>;

export interface MatrixRead {
  /** The range summed: whole buckets of `resolution`. */
  fromMs: number;
  toMs: number;
  resolution: 'minute' | 'hour';
  view: MatrixView;
}

/**
 * The one way a matrix is read, for the API, its exports and the alert rules alike: the cells over the range, the
 * part answered before any server instance existed, and the `-32021` answers over the same whole buckets.
 */
export async function readMatrix(source: MatrixSource, query: CellQuery, group: Grouping, limits?: MatrixLimits): Promise<MatrixRead> {
  const totals = await source.cellTotals(query);
  // The cells' range is whole hours or whole minutes: steps of that size cover it exactly.
  const stepMinutes = totals.resolution === 'hour' ? 60 : 1;
  const required = await source.requiredTrend({ fromMs: totals.fromMs, toMs: totals.toMs, stepMinutes, service: query.service, instance: query.instance });
  const view = buildMatrix(totals.cells, group, limits, totals.serverUnknown, required.rows);
  return { fromMs: totals.fromMs, toMs: totals.toMs, resolution: totals.resolution, view };
}
