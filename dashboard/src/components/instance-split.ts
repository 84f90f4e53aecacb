import { h, integer, percent } from '../lib/dom.js';
import { STATES, cellFigure } from '../lib/matrix-model.js';
import type { ExtensionCounts, InstanceSplitResponse } from '../lib/types.js';

/** A matrix cell split across the instances that answered it: a table for the drill-down, a few lines for the tooltip. */

function stateCell(cell: ExtensionCounts): HTMLElement {
  const look = STATES[cell.state];
  const share = cellFigure(cell);
  return h('td', { class: `split-state state-${cell.state}` }, `${look.symbol} ${look.short}`, share === null ? '' : ` ${percent(share)}`);
}

const figures = (cell: ExtensionCounts): HTMLElement[] => [
  h('td', { class: 'num' }, integer(cell.negotiated)),
  h('td', { class: 'num' }, integer(cell.clientDeclared)),
  h('td', { class: 'num' }, integer(cell.serverAdvertised)),
  h('td', { class: 'num' }, integer(cell.required)),
];

/**
 * The cell per instance that answered its requests: each instance's requests and the cell's state and counts there.
 * Service names and instance ids are whatever senders reported: text nodes only (dom.ts).
 */
export function splitTable(split: InstanceSplitResponse): HTMLElement {
  const head = h(
    'tr',
    null,
    ...['Instance', 'Requests', 'State', 'Negotiated', 'Client declared', 'Server advertised', '-32021'].map((text) => h('th', { scope: 'col' }, text)),
  );
  const rows = split.instances.map((part) =>
    h(
      'tr',
      { 'data-service': part.service ?? '', 'data-instance': part.instance ?? '' },
      h('th', { scope: 'row', class: 'split-instance', title: part.label }, part.label),
      h('td', { class: 'num' }, integer(part.requests), part.serverUnknown === 0 ? '' : ` (${integer(part.serverUnknown)} no server)`),
      stateCell(part.cell),
      ...figures(part.cell),
    ),
  );
  const other = split.other;
  if (other !== null) {
    rows.push(
      h(
        'tr',
        { class: 'split-other' },
        h('th', { scope: 'row', class: 'split-instance' }, `${integer(other.instances)} more instances`),
        h('td', { class: 'num' }, integer(other.requests), other.serverUnknown === 0 ? '' : ` (${integer(other.serverUnknown)} no server)`),
        stateCell(other.cell),
        ...figures(other.cell),
      ),
    );
  }
  return h(
    'div',
    { class: 'split' },
    h('h4', { id: 'split-title' }, `Across instances (${integer(split.instancesTotal)})`),
    h(
      'div',
      { class: 'split-wrap' },
      h('table', { class: 'list split-table', 'aria-labelledby': 'split-title' }, h('thead', null, head), h('tbody', null, ...rows)),
    ),
  );
}

/**
 * A cell's split in a few lines, for its tooltip: the busiest `count` instances with their requests and the cell's
 * state and share there, then how many more. Labels are text (dom.ts).
 */
export function splitLines(split: InstanceSplitResponse, count: number): HTMLElement[] {
  const shown = split.instances.slice(0, count);
  const more = split.instancesTotal - shown.length;
  const line = (label: string, requests: number, cell: ExtensionCounts): HTMLElement => {
    const share = cellFigure(cell);
    return h(
      'li',
      null,
      h('span', { class: 'split-label' }, label),
      ` ${integer(requests)} req · ${STATES[cell.state].short}${share === null ? '' : ` ${percent(share)}`}`,
    );
  };
  return [
    h('p', { class: 'tooltip-split-title' }, `Across ${integer(split.instancesTotal)} ${split.instancesTotal === 1 ? 'instance' : 'instances'}:`),
    h(
      'ul',
      { class: 'tooltip-split' },
      ...shown.map((part) => line(part.label, part.requests, part.cell)),
      ...(more > 0 ? [h('li', null, `and ${integer(more)} more (Enter or click)`)] : []),
    ),
  ];
}
