import { DECLARATION } from '../../contract/index.js';
import { SeriesKind } from '../model/batches.js';
import type { CellTotals, InstanceCellTotal } from '../model/records.js';
import type { RollupReader } from '../store/store.js';
import { type CellQuery, type InstanceCellQuery, likelyCellBuckets, needsClients } from '../store/query/filters.js';
import { type ClientGrouping, type InstanceGrouping, type MatrixLimits, type MatrixView, type RequiredCount, buildMatrix, busiestRows } from './matrix.js';

export type MatrixSource = Pick<RollupReader, 'cellTotals' | 'requiredTrend'>;
export type InstanceMatrixSource = MatrixSource & Pick<RollupReader, 'instanceCellTotals'>;

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
  const { totals, required } = await readCells(source, query);
  const view = buildMatrix(totals.cells, group, limits, totals.serverUnknown, required);
  return { fromMs: totals.fromMs, toMs: totals.toMs, resolution: totals.resolution, view };
}

/**
 * The cells over the range, and the `-32021` answers over the same whole buckets. Both are read at once (on
 * PostgreSQL a round trip fewer), the answers over the buckets the range alone gives; read again over the cells'
 * buckets when those are others (a range reaching back past the minute rollups is answered in whole hours).
 */
async function readCells(source: MatrixSource, query: CellQuery): Promise<{ totals: CellTotals; required: RequiredCount[] }> {
  const requiredOver = async (buckets: Pick<CellTotals, 'fromMs' | 'toMs' | 'resolution'>): Promise<RequiredCount[]> => {
    const result = await source.requiredTrend({
      fromMs: buckets.fromMs,
      toMs: buckets.toMs,
      // The cells' range is whole hours or whole minutes: steps of that size cover it exactly.
      stepMinutes: buckets.resolution === 'hour' ? 60 : 1,
      service: query.service,
      instance: query.instance,
      signal: query.signal,
    });
    return result.rows;
  };
  const likely = likelyCellBuckets(query);
  const [totals, required] = await Promise.all([source.cellTotals(query), requiredOver(likely)]);
  const same = totals.fromMs === likely.fromMs && totals.toMs === likely.toMs && totals.resolution === likely.resolution;
  return { totals, required: same ? required : await requiredOver(totals) };
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
  const busiest = limits === undefined || needsClients(query) ? undefined : await readBusiest(source, query, group, limits);
  if (busiest !== undefined) return busiest;
  // By service, the instances of each are summed in the store: a total per service and cell to keep and build from.
  const totals = await source.instanceCellTotals({ ...query, perService: group === 'service' });
  const { serverUnknown, required } = instanceParts(totals.cells);
  const view = buildMatrix(totals.cells, group, limits, serverUnknown, required);
  return { fromMs: totals.fromMs, toMs: totals.toMs, resolution: totals.resolution, view };
}

/**
 * More rows than the limit: the rows are ranked by their request cells (one or a few per instance), and only the
 * busiest rows' instance cells are read; the rest, summed under `_OTHER`, is the whole (the cells, as by client:
 * no instance dimension, so their number does not grow with the fleet) less those rows. Undefined when every row
 * is shown: then every instance cell is read anyway.
 */
async function readBusiest(
  source: InstanceMatrixSource,
  query: InstanceCellQuery,
  group: InstanceGrouping,
  limits: MatrixLimits,
): Promise<MatrixRead | undefined> {
  const ranked = await source.instanceCellTotals({ ...query, requestsOnly: true });
  const busiest = busiestRows(ranked.cells, group, limits.rows);
  if (busiest === undefined) return undefined;
  const instanceRefs = [...new Set(busiest.cells.map((cell) => cell.instanceRef))].sort((a, b) => a - b);
  const totals = await source.instanceCellTotals({ ...query, instanceRefs });
  // Read after the busiest rows: what was folded in between is in the whole too, so the rest is never short.
  const whole = await readCells(source, { fromMs: query.fromMs, toMs: query.toMs, service: query.service, instance: query.instance, signal: query.signal });
  const { serverUnknown, required } = instanceParts(totals.cells);
  const view = buildMatrix(totals.cells, group, limits, serverUnknown, required, {
    rows: busiest.rows,
    cells: whole.totals.cells,
    serverUnknown: whole.totals.serverUnknown ?? [],
    required: whole.required,
  });
  return { fromMs: totals.fromMs, toMs: totals.toMs, resolution: totals.resolution, view };
}
