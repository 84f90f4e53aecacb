import { at, code, count, integer, notice, replace } from '../../lib/dom.js';
import type { MatrixSlice } from '../../lib/matrix-model.js';
import { type State, rangeLabel, scopeText } from '../../lib/state.js';
import type { InstancesResponse, MatrixResponse } from '../../lib/types.js';
import { ROWS } from './rows.js';

/** The line above the grid: the range the answer covers, the scope, and how much of the matrix is shown. */
export function renderSummary(into: HTMLElement, matrix: MatrixResponse, slice: MatrixSlice, state: State): void {
  const total = slice.rows.reduce((sum, row) => sum + row.requests, 0);
  const counted = { ...matrix, rowsTotal: matrix.rowsTotal ?? matrix.rows.length, extensionsTotal: matrix.extensionsTotal ?? matrix.extensions.length };
  replace(
    into,
    `${rangeLabel(state)} (`,
    at(matrix.from),
    ' – ',
    at(matrix.to),
    `, ${matrix.resolution} resolution), ${scopeText(state)}: `,
    `${integer(slice.rows.length)} of ${integer(counted.rowsTotal)} ${ROWS[state.group].many}, ${integer(slice.extensions.length)} of ${integer(counted.extensionsTotal)} extensions, ${integer(total)} requests${cutText(counted, ROWS[state.group].many)}.`,
  );
}

/** What the answer left out: the API sends the busiest rows and ids up to its limits, and says how many there are. */
function cutText(matrix: { rows: unknown[]; rowsTotal: number; extensions: unknown[]; extensionsTotal: number }, rows: string): string {
  const cut = [
    matrix.rowsTotal > matrix.rows.length ? `the ${integer(matrix.rows.length)} busiest ${rows}` : '',
    matrix.extensionsTotal > matrix.extensions.length ? `the ${integer(matrix.extensions.length)} most used extensions` : '',
  ].filter((part) => part !== '');
  return cut.length === 0 ? '' : ` (shown: ${cut.join(' and ')}; filter or narrow the range for the rest)`;
}

/** What the grid shows instead when there is nothing to show, and why; null when there is a grid to show. */
export function emptyState(matrix: MatrixResponse, slice: MatrixSlice, instances: InstancesResponse, state: State): HTMLElement | null {
  if (matrix.rows.length === 0 && instances.instances.length === 0) {
    return notice(
      'empty',
      'No agent has reported yet.',
      'Start your MCP server with the agent: ',
      code('node --import @extscope/agent/register server.js'),
      ' — it exports to http://localhost:4318 by default (set ',
      code('OTEL_EXPORTER_OTLP_ENDPOINT'),
      ' to this collector’s address otherwise). Requests appear here within a minute.',
    );
  }
  if (matrix.rows.length === 0) {
    return notice(
      'empty',
      `No requests in the ${rangeLabel(state)} for ${scopeText(state)}.`,
      `${count(instances.instances.length, 'instance')} reported before. Choose a longer time range or clear the service and instance filters.`,
    );
  }
  if (slice.rows.length === 0) {
    const noun = ROWS[state.group];
    return notice(
      'empty',
      `No ${noun.one} matches the filters.`,
      state.client !== '' ? `Client filter: ${state.client}. ` : '',
      state.rows !== '' ? `Row text filter: “${state.rows}”. ` : '',
      `Clear them to see every ${noun.one}.`,
    );
  }
  if (matrix.extensions.length === 0) {
    return notice(
      'empty',
      'No extension was declared or advertised in this range.',
      `${integer(matrix.rows.reduce((sum, row) => sum + row.requests, 0))} requests were received, but no client declared an extension and no server advertised one.`,
    );
  }
  if (slice.extensions.length === 0) return notice('empty', `No extension id contains “${state.cols}”.`, 'Clear the extension filter to see every column.');
  return null;
}
