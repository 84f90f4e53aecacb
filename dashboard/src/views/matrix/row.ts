import { h, integer, percent } from '../../lib/dom.js';
import { type Cell, type MatrixSlice, STATES, cellFigure, cellOf } from '../../lib/matrix-model.js';
import { type State, href } from '../../lib/state.js';
import type { MatrixRow } from '../../lib/types.js';
import { clientTitle } from '../../lib/unknown-client.js';

/** The fixed height of a matrix row (see `table.matrix tbody tr` in the stylesheet). */
export const ROW_PX = 42;

/** One matrix row: its label (a link to the row's example requests) with its declarations, its requests, its cells. */
export function rowElement(row: MatrixRow, rowIndex: number, slice: MatrixSlice, state: State, tabStop: { row: number; col: number }): HTMLTableRowElement {
  const tr = h('tr', { 'data-row': rowIndex, 'data-client': row.client, 'aria-rowindex': rowIndex + 2 });
  const label = h(
    'a',
    { href: href(state, { view: 'matrix', cellClient: row.client, cellExt: '' }), class: 'client-link', title: clientTitle(row.client) },
    row.client,
  );
  tr.appendChild(h('th', { scope: 'row', class: 'client' }, label, declarationLine(row)));
  const unknown = row.serverUnknown;
  tr.appendChild(
    h(
      'td',
      { class: 'requests' },
      integer(row.requests),
      ...(unknown === 0
        ? []
        : [
            h(
              'span',
              {
                class: 'server-unknown',
                title: `${integer(unknown)} of ${integer(row.requests)} requests were answered before any server instance existed: not in the shares`,
              },
              `${integer(unknown)} no server`,
            ),
          ]),
    ),
  );
  slice.extensions.forEach(({ id, index }, colIndex) => {
    const first = tabStop.row === rowIndex && tabStop.col === colIndex;
    tr.appendChild(cellElement(row, cellOf(row, index, id), id, rowIndex, colIndex, first, state.cellClient === row.client && state.cellExt === id));
  });
  return tr;
}

/** The rows above or below the window, as one row of their height: the scroll height stays the whole matrix's. */
export function spacer(rows: number, columns: number): HTMLTableRowElement {
  const tr = h('tr', { class: 'spacer', 'aria-hidden': 'true' }, h('td', { colspan: columns }));
  tr.style.height = `${rows * ROW_PX}px`;
  if (rows === 0) tr.hidden = true;
  return tr;
}

/**
 * One cell, built with plain DOM calls: a large matrix has thousands. Its negotiated share, then the state's symbol
 * and word (and any -32021 count) are what it shows; its accessible name says the same in words (the symbols are for
 * the eye).
 */
function cellElement(row: MatrixRow, cell: Cell, id: string, rowIndex: number, colIndex: number, first: boolean, selected: boolean): HTMLTableCellElement {
  const look = STATES[cell.state];
  const figure = cellFigure(cell);
  const share = figure === null ? '' : percent(figure);
  const td = document.createElement('td');
  td.className = selected ? `cell state-${cell.state} selected` : `cell state-${cell.state}`;
  td.dataset['row'] = String(rowIndex);
  td.dataset['col'] = String(colIndex);
  td.dataset['client'] = row.client;
  td.dataset['ext'] = id;
  td.tabIndex = first ? 0 : -1;
  const unknown = row.serverUnknown;
  const base = unknown === 0 ? 'of requests' : `of ${cell.known} requests with a known server; ${unknown} answered before any server instance existed`;
  const required = cell.required === 0 ? '' : `; ${cell.required} answered -32021 naming it`;
  td.setAttribute('aria-label', `${row.client}, ${id}: ${look.text}${share === '' ? '' : `, negotiated: ${share} ${base}`}${required}`);
  if (unknown > 0) td.dataset['serverUnknown'] = String(unknown);
  // The shade follows the negotiated share (the legend's bar); the symbol and word say the state without colour.
  td.style.setProperty('--share', String(cell.negotiatedShare ?? 0));
  td.dataset['share'] = cell.negotiatedShare === null ? '' : String(cell.negotiatedShare);
  td.appendChild(document.createTextNode(share === '' ? '\u00a0' : share));
  const word = document.createElement('span');
  word.className = 'word';
  word.textContent = `${look.symbol} ${look.short}`;
  td.appendChild(word);
  if (cell.required > 0) {
    const errors = document.createElement('span');
    errors.className = 'required';
    errors.textContent = `×${cell.required >= 1000 ? `${Math.floor(cell.required / 1000)}k` : cell.required}`;
    errors.title = `${cell.required} answered -32021`;
    word.appendChild(errors);
  }
  return td;
}

function declarationLine(row: MatrixRow): HTMLElement {
  const d = row.declaration;
  const part = (label: string, n: number, cls: string): HTMLElement =>
    h('span', { class: `decl decl-${cls}`, title: `${label}: ${n} of ${row.requests} requests` }, `${label} ${integer(n)}`);
  return h(
    'span',
    { class: 'declarations' },
    part('declared', d.declared, 'declared'),
    ' · ',
    part('none', d.none, 'none'),
    ' · ',
    part('unknown', d.unknown, 'unknown'),
  );
}
