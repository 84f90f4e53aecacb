import { type Group, type State, byInstance, clientGroup, rangeParams } from './state.js';
import type { MatrixRow } from './types.js';

/**
 * The query parameters of every API read that follows the page's range, scope and grouping, from its state (the
 * URL). They live in one place because the cache key is the parameters: two views, or a view and the filter bar,
 * asking for the same data share one answer (the matrix view's rows feed the client filter, the tooltip's split the
 * drill-down). The fleet and alerts views page through lists of their own, narrowed by the service alone.
 */

/**
 * The matrix request of the current state. Rows by service or instance carry no client: the client filter then
 * narrows the requests counted, in the collector.
 */
export function matrixParams(state: State): Record<string, string> {
  return {
    ...rangeParams(state),
    service: state.service,
    instance: state.instance,
    group: state.group,
    ...(byInstance(state.group) ? { client: state.client } : {}),
  };
}

/** The client matrix of the state's range and scope: the client filter's choices, whatever the rows are grouped by. */
export function clientMatrixParams(state: State): Record<string, string> {
  return byInstance(state.group) ? { ...rangeParams(state), service: state.service, instance: state.instance, group: 'client' } : matrixParams(state);
}

/** The matrix's exports (the collector writes them): the matrix request with the page's text and client filters. */
export function matrixExportParams(state: State): Record<string, string> {
  return { ...matrixParams(state), rows: state.rows, cols: state.cols, client: state.client };
}

/** The extension page's matrix: every client version, so that its tables name versions. */
export function extensionMatrixParams(state: State): Record<string, string> {
  return { ...rangeParams(state), service: state.service, instance: state.instance, group: 'client_version' };
}

/**
 * The trend charts' step where the API's own (by the range's length) is too coarse for a chart: the default 24 h in
 * 5-minute steps (288), not 24 hours, so that a fleet running for minutes draws lines rather than single dots.
 */
const TREND_STEPS: Partial<Record<State['range'], string>> = { '24h': '5m' };

/** The trend series of the state's range and scope. */
export function trendParams(state: State): Record<string, string> {
  const step = TREND_STEPS[state.range];
  return { ...rangeParams(state), ...(step === undefined ? {} : { step }), service: state.service, instance: state.instance, client: state.client };
}

/** The clients trend, grouped as the rows are when they are clients. */
export function clientTrendParams(state: State): Record<string, string | number> {
  return { ...trendParams(state), group: clientGroup(state.group), limit: 100 };
}

/** One extension's negotiated share over time. */
export function timeseriesParams(state: State, extension: string): Record<string, string> {
  return { extension, ...rangeParams(state), service: state.service, client: state.client };
}

/** What changed between the range's two halves, by more than the state's threshold. */
export function changesParams(state: State): Record<string, string | number> {
  return { ...rangeParams(state), service: state.service, instance: state.instance, threshold: state.threshold };
}

/** The instances listed in a cell's split; the rest are summed in one line (the API's `other`). */
const SPLIT_LIMIT = 20;

/** What narrows `GET /api/v1/matrix/cell` to a matrix row: its client (and version, or none), service or instance, within the page's scope. */
function splitParams(row: MatrixRow, group: Group, scope: { service: string; instance: string; client: string }): Record<string, string | undefined> {
  if (group === 'service') return { service: row.service ?? undefined, instance: scope.instance, client: scope.client };
  if (group === 'instance') return { service: row.service ?? undefined, instance: row.instance ?? undefined, client: scope.client };
  const within = { service: scope.service, instance: scope.instance };
  if (row.name === null) return { ...within, unnamed: 'true' };
  if (group === 'client') return { ...within, client: row.name };
  return row.version === null ? { ...within, client: row.name, unversioned: 'true' } : { ...within, client: row.name, version: row.version };
}

/** One matrix cell across the instances that answered it (the tooltip's and the drill-down's, one cached answer). */
export function cellSplitParams(state: State, row: MatrixRow, extension: string): Record<string, string | number | undefined> {
  return { ...rangeParams(state), ...splitParams(row, state.group, state), extension, limit: SPLIT_LIMIT };
}

/**
 * Example requests of a matrix row (and of one of its extension ids, if a cell is open). Rows by service or instance
 * keep the page's client filter, and ask for more: the API narrows by service, the page picks the row's instance.
 */
export function examplesParams(state: State, row: MatrixRow): Record<string, string | number | undefined> {
  const instances = byInstance(state.group);
  return {
    service: instances ? (row.service ?? undefined) : state.service,
    client: instances ? state.client : (row.name ?? undefined),
    version: state.group === 'client_version' ? (row.version ?? undefined) : undefined,
    extension: state.cellExt === '' ? undefined : state.cellExt,
    limit: instances ? 100 : 20,
  };
}
