import { h, replace } from '../../lib/dom.js';
import { type Cell, type MatrixSlice, cellOf } from '../../lib/matrix-model.js';
import type { State } from '../../lib/state.js';
import type { MatrixRow } from '../../lib/types.js';
import type { Current } from './current.js';
import { headerRow } from './header.js';
import { type Place, keyTarget } from './keyboard.js';
import { ROW_PX, rowElement, spacer } from './row.js';

/** Rows kept in the DOM beyond the view, above and below. */
const OVERSCAN_ROWS = 8;

/** Column widths (rem): the row labels' bounds, the requests column, and the narrowest an extension column gets. */
const CLIENT_REM = { min: 16, max: 24 };
const REQUESTS_REM = 7;
const EXTENSION_MIN_REM = 6.5;

/**
 * The label column fits the longest label it shows (estimated from its length, since a fixed layout measures no
 * cell), between bounds: `(unknown client)@(unknown version)` whole, a sender's very long name cut with an ellipsis.
 */
function clientColumnRem(rows: readonly MatrixRow[]): number {
  const longest = rows.reduce((most, row) => Math.max(most, row.client.length), 0);
  return Math.min(CLIENT_REM.max, Math.max(CLIENT_REM.min, Math.ceil(longest * 0.58 + 1.5)));
}

/** A cell of the grid with its row and extension id. */
export interface FoundCell {
  row: MatrixRow;
  cell: Cell;
  id: string;
}

/**
 * The matrix as an ARIA grid: the table, the window of rows in the DOM, and the one tab stop the keyboard moves.
 * A click on a row's label or a cell (or Enter on a cell) navigates; the view renders what follows.
 */
export class MatrixGrid {
  readonly element: HTMLElement = h('div', { class: 'grid-wrap' });
  private tabStop: Place = { row: 0, col: 0 };
  private window: { body: HTMLTableSectionElement; table: HTMLTableElement; start: number; end: number; state: State; layout: string } | undefined;
  private scrolling = false;

  /** `open`: a cell was opened from the grid (the view moves the keyboard to its example requests once shown). */
  constructor(
    private readonly current: Current,
    private readonly open: (found: FoundCell) => void,
  ) {
    this.element.addEventListener('keydown', (event) => this.onKey(event));
    this.element.addEventListener('click', (event) => {
      const target = event.target as HTMLElement;
      const link = target.closest<HTMLAnchorElement>('a.client-link');
      if (link !== null) {
        const client = link.closest<HTMLElement>('tr[data-client]')?.dataset['client'];
        if (client === undefined || (event as MouseEvent).button !== 0 || (event as MouseEvent).ctrlKey || (event as MouseEvent).metaKey) return;
        event.preventDefault();
        this.current.context.navigate({ cellClient: client, cellExt: '' });
        return;
      }
      const cell = target.closest<HTMLElement>('td[data-col]');
      if (cell !== null) this.openCell(cell);
    });
    this.element.addEventListener('scroll', () => {
      if (this.scrolling) return;
      this.scrolling = true;
      requestAnimationFrame(() => {
        this.scrolling = false;
        this.renderWindow();
      });
    });
  }

  render(slice: MatrixSlice, state: State): void {
    // Same columns and sort (a row filter, a refresh): keep the table and its header, and renew only the rows.
    const clientRem = clientColumnRem(this.current.data?.matrix.rows ?? slice.rows);
    const layout = JSON.stringify([slice.extensions.map(({ id }) => id), state.sort, state.dir, clientRem]);
    if (this.window !== undefined && this.window.layout === layout && this.element.contains(this.window.table)) {
      const active = document.activeElement instanceof HTMLElement && this.window.body.contains(document.activeElement) ? document.activeElement : null;
      const focusRow = active === null ? -1 : slice.rows.findIndex((row) => row.client === active.dataset['client']);
      if (active !== null) this.tabStop = { row: Math.max(0, focusRow), col: this.tabStop.col };
      else if (this.tabStop.row >= slice.rows.length) this.tabStop = { row: 0, col: 0 };
      this.window = { ...this.window, start: -1, end: -1, state };
      this.window.table.setAttribute('aria-rowcount', String(slice.rows.length + 1));
      this.renderWindow();
      if (active !== null && focusRow >= 0) this.focusCell(focusRow, this.tabStop.col);
      performance.mark('extscope:first-rows');
      return;
    }
    const body = h('tbody');
    const clientColumn = h('col', { class: 'col-client' });
    clientColumn.style.width = `${clientRem}rem`;
    const columns = h('colgroup', null, clientColumn, h('col', { class: 'col-requests' }), ...slice.extensions.map(() => h('col', { class: 'col-ext' })));
    const table = h(
      'table',
      {
        class: 'matrix',
        role: 'grid',
        'aria-label': 'Extension support matrix',
        'aria-rowcount': slice.rows.length + 1,
        'aria-colcount': slice.extensions.length + 2,
      },
      columns,
      h('thead', null, headerRow(slice, state, this.current.context.navigate)),
      body,
    );
    // Fixed layout needs the table's width: all the wrap has, and at least every column's least (the wrap scrolls then).
    table.style.width = `max(100%, ${clientRem + REQUESTS_REM + EXTENSION_MIN_REM * slice.extensions.length}rem)`;
    // A re-render (refresh, sort, drill-down) keeps the keyboard where it was: on the same cell, or the same sort button.
    const active = document.activeElement instanceof HTMLElement && this.element.contains(document.activeElement) ? document.activeElement : null;
    const focusSort = active?.dataset['sort'];
    const focusCell = active?.dataset['ext'] !== undefined ? { client: active.dataset['client'] ?? '', ext: active.dataset['ext'] ?? '' } : null;
    const focusRow = focusCell === null ? -1 : slice.rows.findIndex((row) => row.client === focusCell.client);
    const focusCol = focusCell === null ? -1 : slice.extensions.findIndex(({ id }) => id === focusCell.ext);
    this.tabStop = focusRow >= 0 && focusCol >= 0 ? { row: focusRow, col: focusCol } : { row: 0, col: 0 };
    this.window = { body, table, start: -1, end: -1, state, layout };
    const scrollTop = this.element.scrollTop;
    replace(this.element, table);
    this.element.scrollTop = scrollTop;
    this.renderWindow();
    if (focusRow >= 0 && focusCol >= 0) this.focusCell(focusRow, focusCol);
    else if (focusSort !== undefined) [...table.querySelectorAll<HTMLElement>('button.sort')].find((button) => button.dataset['sort'] === focusSort)?.focus();
    performance.mark('extscope:first-rows');
  }

  /** The cell a grid element is, in the matrix on screen. */
  cellAt(element: HTMLElement): FoundCell | undefined {
    const rowIndex = Number(element.dataset['row']);
    const colIndex = Number(element.dataset['col']);
    const column = this.current.data?.slice.extensions[colIndex];
    const row = this.current.data?.slice.rows[rowIndex];
    if (column === undefined || row === undefined) return undefined;
    return { row, id: column.id, cell: cellOf(row, column.index, column.id) };
  }

  /**
   * Only the rows in view (and some around them) are in the DOM: a matrix of hundreds of clients costs the same
   * as one screenful to lay out. Spacer rows keep the scroll height; rows have a fixed height (see the stylesheet).
   */
  private renderWindow(): void {
    const window = this.window;
    const slice = this.current.data?.slice;
    if (window === undefined || slice === undefined) return;
    const head = window.table.tHead?.getBoundingClientRect().height ?? 0;
    const first = Math.max(0, Math.floor((this.element.scrollTop - head) / ROW_PX) - OVERSCAN_ROWS);
    const visible = Math.ceil(Math.max(this.element.clientHeight, 600) / ROW_PX);
    const start = Math.min(first, Math.max(0, slice.rows.length - visible - 2 * OVERSCAN_ROWS));
    const end = Math.min(slice.rows.length, start + visible + 2 * OVERSCAN_ROWS);
    if (start === window.start && end === window.end) return;
    const refocus = document.activeElement instanceof HTMLElement && window.body.contains(document.activeElement) ? this.tabStop : null;
    window.start = start;
    window.end = end;
    const fragment = document.createDocumentFragment();
    fragment.appendChild(spacer(start, slice.extensions.length + 2));
    for (let index = start; index < end; index++) fragment.appendChild(rowElement(slice.rows[index] as MatrixRow, index, slice, window.state, this.tabStop));
    fragment.appendChild(spacer(slice.rows.length - end, slice.extensions.length + 2));
    window.body.replaceChildren(fragment);
    if (refocus !== null) this.focusCell(refocus.row, refocus.col, false);
  }

  /** Moves the grid's one tab stop to a cell (rendering its rows first if they are out of the window) and focuses it. */
  private focusCell(row: number, col: number, scroll = true): void {
    const window = this.window;
    if (window === undefined) return;
    if (scroll && (row < window.start || row >= window.end)) {
      const head = window.table.tHead?.getBoundingClientRect().height ?? 0;
      this.element.scrollTop = Math.max(0, head + row * ROW_PX - this.element.clientHeight / 2);
      this.renderWindow();
    }
    this.tabStop = { row, col };
    window.body.querySelector<HTMLElement>('td.cell[tabindex="0"]')?.setAttribute('tabindex', '-1');
    const cell = window.body.querySelector<HTMLElement>(`td[data-row="${row}"][data-col="${col}"]`);
    if (cell === null) return;
    cell.tabIndex = 0;
    cell.focus({ preventScroll: !scroll });
  }

  /** Arrow keys move between cells (one tab stop for the whole grid), Enter opens the drill-down. */
  private onKey(event: KeyboardEvent): void {
    const current = (event.target as HTMLElement).closest<HTMLElement>('td[data-col]');
    if (current === null) return;
    const at = { row: Number(current.dataset['row']), col: Number(current.dataset['col']) };
    const size = { rows: this.current.data?.slice.rows.length ?? 0, cols: this.current.data?.slice.extensions.length ?? 0 };
    const target = keyTarget(event.key, at, size);
    if (target === undefined) return;
    event.preventDefault();
    if (target === 'open') {
      this.openCell(current);
      return;
    }
    if (target.row === at.row && target.col === at.col) return;
    this.focusCell(target.row, target.col);
  }

  private openCell(element: HTMLElement): void {
    const found = this.cellAt(element);
    if (found !== undefined) this.open(found);
  }
}
