import { DECLARATION } from '../../contract/index.js';
import { SeriesKind } from '../model/batches.js';
import type { InstanceCellTotal } from '../model/records.js';
import type { RollupReader } from '../store/store.js';
import type { CellQuery, InstanceCellQuery } from '../store/query/filters.js';
import { type ClientGrouping, type InstanceGrouping, type MatrixLimits, type MatrixView, type RequiredCount, buildMatrix } from './matrix.js';

export type MatrixSource = Pick<RollupReader, 'cellTotals' | 'requiredTrend'>;
export type InstanceMatrixSource = Pick<RollupReader, 'instanceCellTotals'>;

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
export async function readMatrix(source: MatrixSource, query: CellQuery, group: ClientGrouping, limits?: MatrixLimits): Promise<MatrixRead> {
  const totals = await source.cellTotals(query);
  // The cells' range is whole hours or whole minutes: steps of that size cover it exactly.
  const stepMinutes = totals.resolution === 'hour' ? 60 : 1;
  const required = await source.requiredTrend({
    fromMs: totals.fromMs,
    toMs: totals.toMs,
    stepMinutes,
    service: query.service,
    instance: query.instance,
    signal: query.signal,
  });
  const view = buildMatrix(totals.cells, group, limits, totals.serverUnknown, required.rows);
  return { fromMs: totals.fromMs, toMs: totals.toMs, resolution: totals.resolution, view };
}

/**
 * What one read of instance cells holds, split as {@link buildMatrix} takes it: every cell, the part answered
 * before any server instance existed, and the `-32021` answers per id (the extension cells flagged `required`).
 * The series keep all three, so one read gives them over exactly the same buckets.
 */
function instanceParts(cells: readonly InstanceCellTotal[]): { serverUnknown: InstanceCellTotal[]; required: RequiredCount[] } {
  const serverUnknown = cells.filter((cell) => cell.serverDeclaration === DECLARATION.unknown);
  const required = cells
    .filter((cell) => cell.kind === SeriesKind.Extension && cell.required === true)
    .map((cell) => ({
      id: cell.extensionId,
      name: cell.clientName,
      version: cell.clientVersion,
      count: cell.count,
      service: cell.service,
      instanceId: cell.instanceId,
      build: cell.build,
    }));
  return { serverUnknown, required };
}

/**
 * The matrix with one row per service, per build (model/build.ts) or per instance (service + instance id), from the instance cells: the same
 * cells, states and shares as by client. `clientName` narrows it to one client's requests.
 */
export async function readInstanceMatrix(
  source: InstanceMatrixSource,
  query: InstanceCellQuery,
  group: InstanceGrouping,
  limits?: MatrixLimits,
): Promise<MatrixRead> {
  const totals = await source.instanceCellTotals(query);
  const { serverUnknown, required } = instanceParts(totals.cells);
  const view = buildMatrix(totals.cells, group, limits, serverUnknown, required);
  return { fromMs: totals.fromMs, toMs: totals.toMs, resolution: totals.resolution, view };
}
