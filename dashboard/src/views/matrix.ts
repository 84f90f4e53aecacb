import { getJson, getText } from '../api.js';
import { type Context, type ViewModule, namesOf } from '../context.js';
import { at, code, count, h, integer, notice, percent, replace } from '../dom.js';
import { download } from '../download.js';
import { type Cell, type MarkdownMeaning, type MatrixSlice, STATES, cellOf, describeCell, matrixMarkdown, shownShare, sliceMatrix } from '../matrix-model.js';
import { clientMatrixParams, matrixParams } from '../filters.js';
import { SPLIT_LIMIT, splitLines, splitParams, splitTable } from '../instance-split.js';
import { type Group, type State, byInstance, href, rangeLabel, rangeParams } from '../state.js';
import type { ExamplesResponse, InstanceSplitResponse, InstancesResponse, MatrixResponse, MatrixRow } from '../types.js';
import { clientTitle } from '../unknown-client.js';

/** Instances a cell's tooltip names (the drill-down lists more). */
const TOOLTIP_SPLIT = 3;

/** The support matrix: clients × extension ids, with the drill-down to example requests below it. */


export function scopeText(state: State): string {
  const parts = [state.service === '' ? 'all services' : `service ${state.service}`];
  if (state.instance !== '') parts.push(`instance ${state.instance}`);
  if (state.client !== '') parts.push(`client ${state.client}`);
  return parts.join(', ');
}

/** What a row is, per grouping: the corner heading, and the noun for counts and messages. */
const ROWS: Record<Group, { heading: string; one: string; many: string }> = {
  client: { heading: 'Client', one: 'client', many: 'clients' },
  client_version: { heading: 'Client', one: 'client', many: 'clients' },
  service: { heading: 'Service', one: 'service', many: 'services' },
  instance: { heading: 'Instance', one: 'instance', many: 'instances' },
};

/** The fixed height of a matrix row (see `table.matrix tbody tr` in the stylesheet), and rows kept beyond the view. */
const ROW_PX = 46;
const OVERSCAN_ROWS = 8;

/**
 * Rows by instance are summed from every instance's series, a read several times longer than the client rows' on a
 * large fleet. Once the matrix is on screen, the page asks for them while it is idle, into the same cache the
 * grouping select reads (emptied at each refresh), so that regrouping renders at once; a change of range or filter
 * aborts the read (and the collector stops it). Rows by client, the way back, are loaded anyway for the client filter.
 */
function prefetchByInstance(context: Context, state: State, instances: InstancesResponse): void {
  if (byInstance(state.group) || instances.instances.length < 2) return;
  const params = matrixParams({ ...state, group: 'instance' });
  const wanted = JSON.stringify(params);
  const idle = (work: () => void): void => void ('requestIdleCallback' in window ? window.requestIdleCallback(work, { timeout: 2000 }) : setTimeout(work, 200));
  idle(() => {
    if (context.isCurrent()) context.prefetch('matrix', params, (next) => JSON.stringify(matrixParams({ ...next, group: 'instance' })) === wanted);
  });
}

function spacer(rows: number, columns: number): HTMLTableRowElement {
  const tr = h('tr', { class: 'spacer', 'aria-hidden': 'true' }, h('td', { colspan: columns }));
  tr.style.height = `${rows * ROW_PX}px`;
  if (rows === 0) tr.hidden = true;
  return tr;
}

class MatrixView implements ViewModule {
  private rowFilter!: HTMLInputElement;
  private rowFilterLabel!: HTMLLabelElement;
  private colFilter!: HTMLInputElement;
  private summary!: HTMLElement;
  private grid!: HTMLElement;
  private tooltip!: HTMLElement;
  /** The cell the tooltip describes, and the pause before its split is asked for. */
  private tooltipFor: HTMLElement | undefined;
  private splitTimer: ReturnType<typeof setTimeout> | undefined;
  private drill!: HTMLElement;
  private markdownBox!: HTMLTextAreaElement;
  private meaning!: HTMLSelectElement;
  private context!: Context;
  private data: { matrix: MatrixResponse; slice: MatrixSlice } | undefined;
  private typing: ReturnType<typeof setTimeout> | undefined;
  /** A cell was opened from the grid: the keyboard goes to its example requests once they are shown. */
  private focusDrill = false;
  private tabStop = { row: 0, col: 0 };
  private window: { body: HTMLTableSectionElement; table: HTMLTableElement; start: number; end: number; state: State; layout: string } | undefined;
  private scrolling = false;

  mount(root: HTMLElement, context: Context): void {
    this.context = context;
    this.rowFilter = h('input', { type: 'search', id: 'matrix-rows', placeholder: 'e.g. claude', autocomplete: 'off', spellcheck: 'false' });
    this.colFilter = h('input', { type: 'search', id: 'matrix-cols', placeholder: 'e.g. tasks', autocomplete: 'off', spellcheck: 'false' });
    const onType = (): void => {
      clearTimeout(this.typing);
      this.typing = setTimeout(() => this.context.navigate({ rows: this.rowFilter.value, cols: this.colFilter.value }, 'replace'), 30);
    };
    this.rowFilter.addEventListener('input', onType);
    this.colFilter.addEventListener('input', onType);
    this.meaning = h('select', { id: 'markdown-meaning' }, h('option', { value: 'negotiated' }, 'Markdown: yes = negotiated'), h('option', { value: 'declared' }, 'Markdown: yes = declared by the client'));
    const button = (label: string, action: () => void): HTMLButtonElement => {
      const element = h('button', { type: 'button' }, label);
      element.addEventListener('click', action);
      return element;
    };
    this.markdownBox = h('textarea', { id: 'markdown-output', readonly: true, rows: 8, 'aria-label': 'Markdown table', spellcheck: 'false' });
    const markdownDetails = h('details', { class: 'markdown' }, h('summary', null, 'Markdown table (in the shape of the official support matrix)'), this.markdownBox);
    markdownDetails.addEventListener('toggle', () => {
      if (markdownDetails.open) this.markdownBox.value = this.markdown();
    });
    this.meaning.addEventListener('change', () => (this.markdownBox.value = this.markdown()));
    const toolbar = h(
      'div',
      { class: 'toolbar' },
      h('div', { class: 'field' }, (this.rowFilterLabel = h('label', { for: 'matrix-rows' }, 'Filter clients')), this.rowFilter),
      h('div', { class: 'field' }, h('label', { for: 'matrix-cols' }, 'Filter extensions'), this.colFilter),
      h(
        'div',
        { class: 'exports', role: 'group', 'aria-label': 'Export' },
        button('CSV', () => void this.export('csv')),
        button('JSON', () => void this.export('json')),
        button('Markdown', () => this.data && download('extscope-support-matrix.md', 'text/markdown', this.markdown())),
        h('label', { for: 'markdown-meaning', class: 'visually-hidden' }, 'What a yes (✅) in the Markdown table means'),
        this.meaning,
      ),
    );
    const shade = h('li', { class: 'legend-shade' }, 'Negotiated share: ', h('span', { class: 'shade-bar', 'aria-hidden': 'true' }), ' 0 % → 100 %');
    const legend = h(
      'ul',
      { class: 'legend', 'aria-label': 'Legend' },
      ...(Object.keys(STATES) as (keyof typeof STATES)[]).map((state) => h('li', { class: `state-${state}` }, h('span', { class: 'symbol', 'aria-hidden': 'true' }, STATES[state].symbol), ` ${STATES[state].text}`)),
      shade,
      h('li', { class: 'legend-required' }, h('span', { class: 'required' }, '×n'), ' requests answered -32021 (a required capability missing) naming the id'),
      h('li', null, 'Cell figure: share of the row’s requests whose server’s declaration is known (requests answered before any server instance existed are counted apart). Declarations per row: declared / none (capabilities without extensions) / unknown (no capabilities received — not “unsupported”).'),
    );
    this.summary = h('p', { class: 'summary', 'aria-live': 'polite' });
    this.grid = h('div', { class: 'grid-wrap' });
    this.tooltip = h('div', { class: 'tooltip', role: 'tooltip', id: 'cell-tooltip', hidden: true });
    this.drill = h('section', { class: 'drill', 'aria-label': 'Example requests' });
    replace(root, h('h2', null, 'Support matrix'), toolbar, legend, this.summary, this.grid, markdownDetails, this.drill, this.tooltip);
    this.grid.addEventListener('keydown', (event) => this.onKey(event));
    this.grid.addEventListener('focusin', (event) => this.showTooltip(event.target as HTMLElement));
    this.grid.addEventListener('focusout', () => this.hideTooltip());
    this.grid.addEventListener('mouseover', (event) => this.showTooltip(event.target as HTMLElement));
    this.grid.addEventListener('mouseleave', () => this.hideTooltip());
    this.grid.addEventListener('click', (event) => {
      const target = event.target as HTMLElement;
      const link = target.closest<HTMLAnchorElement>('a.client-link');
      if (link !== null) {
        const client = link.closest<HTMLElement>('tr[data-client]')?.dataset['client'];
        if (client === undefined || (event as MouseEvent).button !== 0 || (event as MouseEvent).ctrlKey || (event as MouseEvent).metaKey) return;
        event.preventDefault();
        this.context.navigate({ cellClient: client, cellExt: '' });
        return;
      }
      const cell = target.closest<HTMLElement>('td[data-col]');
      if (cell !== null) this.openCell(cell);
    });
    this.grid.addEventListener('scroll', () => {
      if (this.scrolling) return;
      this.scrolling = true;
      requestAnimationFrame(() => {
        this.scrolling = false;
        this.renderWindow();
      });
    });
  }

  async clientNames(context: Context): Promise<string[]> {
    return namesOf((await context.load<MatrixResponse>('matrix', clientMatrixParams(context.state))).rows);
  }

  async update(context: Context): Promise<void> {
    this.context = context;
    const { state } = context;
    if (document.activeElement !== this.rowFilter) this.rowFilter.value = state.rows;
    if (document.activeElement !== this.colFilter) this.colFilter.value = state.cols;
    this.rowFilterLabel.textContent = `Filter ${ROWS[state.group].many}`;
    let matrix: MatrixResponse;
    let instances: InstancesResponse;
    try {
      [matrix, instances] = await Promise.all([context.load<MatrixResponse>('matrix', matrixParams(state)), context.load<InstancesResponse>('instances')]);
    } catch (error) {
      if (context.isCurrent()) context.fail(error);
      return;
    }
    if (!context.isCurrent()) return;
    context.loaded();
    const slice = sliceMatrix(matrix, state);
    this.data = { matrix, slice };
    if (this.markdownBox.closest('details')?.open) this.markdownBox.value = this.markdown();
    const total = slice.rows.reduce((sum, row) => sum + row.requests, 0);
    const counted = { ...matrix, rowsTotal: matrix.rowsTotal ?? matrix.rows.length, extensionsTotal: matrix.extensionsTotal ?? matrix.extensions.length };
    replace(
      this.summary,
      `${rangeLabel(state)} (`,
      at(matrix.from),
      ' – ',
      at(matrix.to),
      `, ${matrix.resolution} resolution), ${scopeText(state)}: `,
      `${integer(slice.rows.length)} of ${integer(counted.rowsTotal)} ${ROWS[state.group].many}, ${integer(slice.extensions.length)} of ${integer(counted.extensionsTotal)} extensions, ${integer(total)} requests${cutText(counted, ROWS[state.group].many)}.`,
    );
    const empty = this.emptyState(matrix, slice, instances, state);
    if (empty !== null) replace(this.grid, empty);
    else await this.renderGrid(slice, state);
    if (!context.isCurrent()) return;
    if (empty === null) prefetchByInstance(context, state, instances);
    await this.renderDrill(state, matrix);
    if (this.focusDrill && context.isCurrent()) {
      this.focusDrill = false;
      this.drill.querySelector<HTMLElement>('#drill-title')?.focus();
    }
  }

  private emptyState(matrix: MatrixResponse, slice: MatrixSlice, instances: InstancesResponse, state: State): HTMLElement | null {
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
      return notice('empty', `No requests in the ${rangeLabel(state)} for ${scopeText(state)}.`, `${count(instances.instances.length, 'instance')} reported before. Choose a longer time range or clear the service and instance filters.`);
    }
    if (slice.rows.length === 0) {
      const noun = ROWS[state.group];
      return notice('empty', `No ${noun.one} matches the filters.`, state.client !== '' ? `Client filter: ${state.client}. ` : '', state.rows !== '' ? `Row text filter: “${state.rows}”. ` : '', `Clear them to see every ${noun.one}.`);
    }
    if (matrix.extensions.length === 0) {
      return notice('empty', 'No extension was declared or advertised in this range.', `${integer(matrix.rows.reduce((sum, row) => sum + row.requests, 0))} requests were received, but no client declared an extension and no server advertised one.`);
    }
    if (slice.extensions.length === 0) return notice('empty', `No extension id contains “${state.cols}”.`, 'Clear the extension filter to see every column.');
    return null;
  }

  private async renderGrid(slice: MatrixSlice, state: State): Promise<void> {
    // Same columns and sort (a row filter, a refresh): keep the table and its header, and renew only the rows.
    const layout = JSON.stringify([slice.extensions.map(({ id }) => id), state.sort, state.dir]);
    if (this.window !== undefined && this.window.layout === layout && this.grid.contains(this.window.table)) {
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
    const sortButton = (key: string, label: string | Node, description: string): HTMLElement => {
      const active = state.sort === key;
      const next = active && state.dir === 'desc' ? 'asc' : 'desc';
      const button = h('button', { type: 'button', class: 'sort', 'data-sort': key, title: `Sort by ${description}` }, label, h('span', { class: 'sort-mark', 'aria-hidden': 'true' }, active ? (state.dir === 'desc' ? ' ▼' : ' ▲') : ''));
      button.addEventListener('click', () => this.context.navigate({ sort: key, dir: key === 'client' && !active ? 'asc' : next }));
      return button;
    };
    const ariaSort = (key: string): string | null => (state.sort === key ? (state.dir === 'asc' ? 'ascending' : 'descending') : null);
    const head = h(
      'tr',
      null,
      h('th', { scope: 'col', class: 'corner', 'aria-sort': ariaSort('client') }, sortButton('client', ROWS[state.group].heading, ROWS[state.group].one)),
      h('th', { scope: 'col', class: 'requests', 'aria-sort': ariaSort('requests') }, sortButton('requests', 'Requests', 'requests')),
      ...slice.extensions.map(({ id }) =>
        h('th', { scope: 'col', class: 'ext', 'aria-sort': ariaSort(id) }, sortButton(id, h('span', { class: 'ext-id' }, id), id)),
      ),
    );
    const body = h('tbody');
    const columns = h('colgroup', null, h('col', { class: 'col-client' }), h('col', { class: 'col-requests' }), ...slice.extensions.map(() => h('col', { class: 'col-ext' })));
    const table = h('table', { class: 'matrix', role: 'grid', 'aria-label': 'Extension support matrix', 'aria-rowcount': slice.rows.length + 1, 'aria-colcount': slice.extensions.length + 2 }, columns, h('thead', null, h('tr', { 'aria-rowindex': 1 }, ...head.children)), body);
    // Fixed layout needs the table's width: the columns' (see the stylesheet), so no cell is ever measured.
    table.style.width = `${17 + 6 + 4 * slice.extensions.length}rem`;
    // A re-render (refresh, sort, drill-down) keeps the keyboard where it was: on the same cell, or the same sort button.
    const active = document.activeElement instanceof HTMLElement && this.grid.contains(document.activeElement) ? document.activeElement : null;
    const focusSort = active?.dataset['sort'];
    const focusCell = active?.dataset['ext'] !== undefined ? { client: active.dataset['client'] ?? '', ext: active.dataset['ext'] ?? '' } : null;
    const focusRow = focusCell === null ? -1 : slice.rows.findIndex((row) => row.client === focusCell.client);
    const focusCol = focusCell === null ? -1 : slice.extensions.findIndex(({ id }) => id === focusCell.ext);
    this.tabStop = focusRow >= 0 && focusCol >= 0 ? { row: focusRow, col: focusCol } : { row: 0, col: 0 };
    this.window = { body, table, start: -1, end: -1, state, layout };
    const scrollTop = this.grid.scrollTop;
    replace(this.grid, table);
    this.grid.scrollTop = scrollTop;
    this.renderWindow();
    if (focusRow >= 0 && focusCol >= 0) this.focusCell(focusRow, focusCol);
    else if (focusSort !== undefined) [...table.querySelectorAll<HTMLElement>('button.sort')].find((button) => button.dataset['sort'] === focusSort)?.focus();
    performance.mark('extscope:first-rows');
  }

  /**
   * Only the rows in view (and some around them) are in the DOM: a matrix of hundreds of clients costs the same
   * as one screenful to lay out. Spacer rows keep the scroll height; rows have a fixed height (see the stylesheet).
   */
  private renderWindow(): void {
    const window = this.window;
    const slice = this.data?.slice;
    if (window === undefined || slice === undefined) return;
    const head = window.table.tHead?.getBoundingClientRect().height ?? 0;
    const first = Math.max(0, Math.floor((this.grid.scrollTop - head) / ROW_PX) - OVERSCAN_ROWS);
    const visible = Math.ceil(Math.max(this.grid.clientHeight, 600) / ROW_PX);
    const start = Math.min(first, Math.max(0, slice.rows.length - visible - 2 * OVERSCAN_ROWS));
    const end = Math.min(slice.rows.length, start + visible + 2 * OVERSCAN_ROWS);
    if (start === window.start && end === window.end) return;
    const refocus = document.activeElement instanceof HTMLElement && window.body.contains(document.activeElement) ? this.tabStop : null;
    window.start = start;
    window.end = end;
    const fragment = document.createDocumentFragment();
    fragment.appendChild(spacer(start, slice.extensions.length + 2));
    for (let index = start; index < end; index++) fragment.appendChild(this.buildRow(slice.rows[index] as MatrixRow, index, slice, window.state));
    fragment.appendChild(spacer(slice.rows.length - end, slice.extensions.length + 2));
    window.body.replaceChildren(fragment);
    if (refocus !== null) this.focusCell(refocus.row, refocus.col, false);
  }

  private buildRow(row: MatrixRow, rowIndex: number, slice: MatrixSlice, state: State): HTMLTableRowElement {
    const tr = h('tr', { 'data-row': rowIndex, 'data-client': row.client, 'aria-rowindex': rowIndex + 2 });
    const label = h('a', { href: href(state, { view: 'matrix', cellClient: row.client, cellExt: '' }), class: 'client-link', title: clientTitle(row.client) }, row.client);
    tr.appendChild(h('th', { scope: 'row', class: 'client' }, label, declarationLine(row)));
    const unknown = row.serverUnknown;
    tr.appendChild(
      h(
        'td',
        { class: 'requests' },
        integer(row.requests),
        ...(unknown === 0 ? [] : [h('span', { class: 'server-unknown', title: `${integer(unknown)} of ${integer(row.requests)} requests were answered before any server instance existed: not in the shares` }, ` (${integer(unknown)} no server)`)]),
      ),
    );
    slice.extensions.forEach(({ id, index }, colIndex) => {
      const tabStop = this.tabStop.row === rowIndex && this.tabStop.col === colIndex;
      tr.appendChild(cellElement(row, cellOf(row, index, id), id, rowIndex, colIndex, tabStop, state.cellClient === row.client && state.cellExt === id));
    });
    return tr;
  }

  /** Moves the grid's one tab stop to a cell (rendering its rows first if they are out of the window) and focuses it. */
  private focusCell(row: number, col: number, scroll = true): void {
    const window = this.window;
    if (window === undefined) return;
    if (scroll && (row < window.start || row >= window.end)) {
      const head = window.table.tHead?.getBoundingClientRect().height ?? 0;
      this.grid.scrollTop = Math.max(0, head + row * ROW_PX - this.grid.clientHeight / 2);
      this.renderWindow();
    }
    this.tabStop = { row, col };
    window.body.querySelector<HTMLElement>('td.cell[tabindex="0"]')?.setAttribute('tabindex', '-1');
    const cell = window.body.querySelector<HTMLElement>(`td[data-row="${row}"][data-col="${col}"]`);
    if (cell === null) return;
    cell.tabIndex = 0;
    cell.focus({ preventScroll: !scroll });
  }

  private cellAt(element: HTMLElement): { row: MatrixRow; cell: Cell; id: string } | undefined {
    const rowIndex = Number(element.dataset['row']);
    const colIndex = Number(element.dataset['col']);
    const column = this.data?.slice.extensions[colIndex];
    const row = this.data?.slice.rows[rowIndex];
    if (column === undefined || row === undefined) return undefined;
    return { row, id: column.id, cell: cellOf(row, column.index, column.id) };
  }

  private showTooltip(target: HTMLElement): void {
    const element = target.closest<HTMLElement>('td[data-col]');
    if (element === null) return;
    const found = this.cellAt(element);
    if (found === undefined) return;
    // The pointer moving within a cell fires again: the tooltip (and its split, loading or loaded) stays.
    if (this.tooltipFor === element && !this.tooltip.hidden) return;
    this.tooltipFor = element;
    const lines = describeCell(found.row, found.cell);
    const split = h('div', { class: 'tooltip-split-box' });
    replace(this.tooltip, h('p', { class: 'tooltip-title' }, found.row.client, ' × ', found.id), ...lines.map((line) => h('p', null, line)), split, h('p', { class: 'tooltip-hint' }, 'Enter or click: example requests'));
    this.tooltip.hidden = false;
    this.grid.querySelector('[aria-describedby="cell-tooltip"]')?.removeAttribute('aria-describedby');
    element.setAttribute('aria-describedby', 'cell-tooltip');
    this.placeTooltip(element);
    clearTimeout(this.splitTimer);
    if (found.row.summedRows !== undefined) {
      replace(split, h('p', null, `This row sums the ${integer(found.row.summedRows)} least busy rows past the row limit: filter the rows to see their instances.`));
      return;
    }
    // A short pause first: sweeping the pointer across the grid asks for nothing.
    replace(split, h('p', { class: 'tooltip-split-title' }, 'Across instances: …'));
    this.splitTimer = setTimeout(() => void this.fillSplit(element, found, split), 150);
  }

  /** Beside the cell, below it, or above it when below would leave the window. */
  private placeTooltip(element: HTMLElement): void {
    const box = element.getBoundingClientRect();
    const width = 300;
    const left = Math.min(window.scrollX + box.right + 8, window.scrollX + document.documentElement.clientWidth - width - 8);
    this.tooltip.style.left = `${Math.max(8, left)}px`;
    const height = this.tooltip.offsetHeight;
    const below = box.bottom + 4 + height <= document.documentElement.clientHeight || box.top - 4 - height < 0;
    this.tooltip.style.top = `${window.scrollY + (below ? box.bottom + 4 : box.top - 4 - height)}px`;
  }

  /** The cell's split across instances into its tooltip, if the tooltip still shows that cell (the drill-down reuses the load). */
  private async fillSplit(element: HTMLElement, found: { row: MatrixRow; id: string }, into: HTMLElement): Promise<void> {
    const state = this.context.state;
    try {
      const split = await this.context.load<InstanceSplitResponse>('matrix/cell', { ...rangeParams(state), ...splitParams(found.row, state.group, state), extension: found.id, limit: SPLIT_LIMIT });
      if (this.tooltipFor !== element) return;
      replace(into, ...splitLines(split, TOOLTIP_SPLIT));
    } catch {
      if (this.tooltipFor !== element) return;
      replace(into, h('p', { class: 'tooltip-split-title' }, 'Across instances: could not be loaded.'));
    }
    this.placeTooltip(element);
  }

  private hideTooltip(): void {
    clearTimeout(this.splitTimer);
    this.tooltipFor = undefined;
    this.tooltip.hidden = true;
  }

  /** Arrow keys move between cells (one tab stop for the whole grid), Enter opens the drill-down. */
  private onKey(event: KeyboardEvent): void {
    const current = (event.target as HTMLElement).closest<HTMLElement>('td[data-col]');
    if (current === null) return;
    const rows = this.data?.slice.rows.length ?? 0;
    const cols = this.data?.slice.extensions.length ?? 0;
    let row = Number(current.dataset['row']);
    let col = Number(current.dataset['col']);
    switch (event.key) {
      case 'ArrowRight':
        col = Math.min(cols - 1, col + 1);
        break;
      case 'ArrowLeft':
        col = Math.max(0, col - 1);
        break;
      case 'ArrowDown':
        row = Math.min(rows - 1, row + 1);
        break;
      case 'ArrowUp':
        row = Math.max(0, row - 1);
        break;
      case 'Home':
        col = 0;
        break;
      case 'End':
        col = cols - 1;
        break;
      case 'PageDown':
        row = Math.min(rows - 1, row + 10);
        break;
      case 'PageUp':
        row = Math.max(0, row - 10);
        break;
      case 'Enter':
      case ' ':
        event.preventDefault();
        this.openCell(current);
        return;
      default:
        return;
    }
    event.preventDefault();
    if (row === Number(current.dataset['row']) && col === Number(current.dataset['col'])) return;
    this.focusCell(row, col);
  }

  private openCell(element: HTMLElement): void {
    const found = this.cellAt(element);
    if (found === undefined) return;
    this.focusDrill = true;
    this.context.navigate({ cellClient: found.row.client, cellExt: found.id });
  }

  /** The exports are the collector's (one CSV writer, the same figures as the API), with the page's filters. */
  private async export(format: 'csv' | 'json'): Promise<void> {
    const { state } = this.context;
    const params = { ...matrixParams(state), rows: state.rows, cols: state.cols, client: state.client };
    if (format === 'csv') download('extscope-matrix.csv', 'text/csv', await getText('matrix', { ...params, format: 'csv' }));
    else download('extscope-matrix.json', 'application/json', `${JSON.stringify(await getJson<MatrixResponse>('matrix', params), null, 2)}\n`);
  }

  private markdown(): string {
    if (this.data === undefined) return '';
    return matrixMarkdown(this.data.matrix, this.data.slice, this.meaning.value as MarkdownMeaning, scopeText(this.context.state), ROWS[this.context.state.group].heading);
  }

  private async renderDrill(state: State, matrix: MatrixResponse): Promise<void> {
    if (state.cellClient === '') {
      replace(this.drill);
      return;
    }
    const row = matrix.rows.find((candidate) => candidate.client === state.cellClient);
    const close = h('a', { href: href(state, { cellClient: '', cellExt: '' }), class: 'close' }, 'Close');
    close.addEventListener('click', (event) => {
      event.preventDefault();
      this.context.navigate({ cellClient: '', cellExt: '' });
    });
    const title = h('h3', { id: 'drill-title', tabindex: -1 }, 'Example requests: ', state.cellClient, state.cellExt === '' ? '' : ' × ', state.cellExt);
    if (row === undefined) {
      replace(this.drill, title, close, notice('empty', `No requests for ${state.cellClient} in this range.`));
      return;
    }
    const extLink = state.cellExt === '' ? null : h('a', { href: href(state, { view: 'extension', ext: state.cellExt, cellClient: '', cellExt: '' }) }, 'Extension page for ', state.cellExt);
    extLink?.addEventListener('click', (event) => {
      event.preventDefault();
      this.context.navigate({ view: 'extension', ext: state.cellExt, cellClient: '', cellExt: '' });
    });
    const instances = byInstance(state.group);
    let examples: ExamplesResponse;
    let split: HTMLElement | null = null;
    try {
      const examplesLoad = this.context.load<ExamplesResponse>('examples', {
        service: instances ? (row.service ?? undefined) : state.service,
        client: instances ? state.client : (row.name ?? undefined),
        version: state.group === 'client_version' ? (row.version ?? undefined) : undefined,
        extension: state.cellExt === '' ? undefined : state.cellExt,
        limit: instances ? 100 : 20,
      });
      split = await this.splitOf(state, row);
      examples = await examplesLoad;
    } catch (error) {
      replace(this.drill, title, close, notice('error', 'Example requests could not be loaded.', String((error as Error).message)));
      return;
    }
    if (!this.context.isCurrent()) return;
    const list = examples.examples
      .filter((example) => {
        if (state.group === 'instance') return example.instanceId === row.instance;
        if (instances) return true;
        return (row.name === null ? example.clientName === null : true) && (state.group === 'client' || row.version !== null || example.clientVersion === null);
      })
      .slice(0, 20);
    const counts = state.cellExt === '' ? null : h('p', null, describeCell(row, cellOf(row, matrix.extensions.indexOf(state.cellExt), state.cellExt)).join(' · '));
    if (list.length === 0) {
      replace(
        this.drill,
        title,
        close,
        counts,
        split,
        notice('empty', 'No example requests.', 'Examples come from spans: the agent sends them unless ', code('EXTSCOPE_SPANS=false'), ' or trace sampling drops them; the newest five per cell are kept for 7 days. Counts above always come from the metrics.'),
        extLink,
      );
      return;
    }
    const table = h(
      'table',
      { class: 'examples' },
      h('thead', null, h('tr', null, ...['Time', 'Method', 'Target', 'Outcome', 'Client', 'Answered by', 'Declaration', 'Negotiated', 'Trace id', 'Duration'].map((text) => h('th', { scope: 'col' }, text)))),
      h(
        'tbody',
        null,
        ...list.map((example) =>
          h(
            'tr',
            null,
            h('td', null, at(example.start)),
            h('td', null, example.method ?? '–'),
            h('td', null, target(example.name, example.method)),
            h('td', null, example.outcome ?? '–', example.statusCode === null ? '' : ` (${example.statusCode})`),
            h('td', null, example.clientName ?? '(unknown client)', example.clientVersion === null ? '' : `@${example.clientVersion}`),
            h('td', { class: 'answered-by' }, `${example.service ?? '(unknown service)'} / ${example.instanceId ?? '(unknown instance)'}`),
            h('td', null, example.clientDeclaration ?? '–'),
            h('td', { class: 'wrap negotiated' }, example.negotiated.length === 0 ? '–' : example.negotiated.join(', ')),
            h('td', { class: 'wrap trace' }, h('code', null, example.traceId)),
            h('td', null, `${example.durationMs.toFixed(1)} ms`),
          ),
        ),
      ),
    );
    replace(this.drill, title, close, counts, split, h('div', { class: 'examples-wrap' }, table), extLink);
  }

  /** The opened cell across the instances that answered it; nothing for a whole row. */
  private async splitOf(state: State, row: MatrixRow): Promise<HTMLElement | null> {
    if (state.cellExt === '') return null;
    if (row.summedRows !== undefined) return notice('empty', `This row sums the ${integer(row.summedRows)} least busy rows past the row limit: filter the rows to see their instances.`);
    const params = splitParams(row, state.group, state);
    const split = await this.context.load<InstanceSplitResponse>('matrix/cell', { ...rangeParams(state), ...params, extension: state.cellExt, limit: SPLIT_LIMIT });
    return splitTable(split);
  }
}

/**
 * One cell, built with plain DOM calls: a large matrix has thousands. The symbol, share and state word are what it
 * shows; its accessible name says the same in words (the symbols are for the eye).
 */
function cellElement(row: MatrixRow, cell: Cell, id: string, rowIndex: number, colIndex: number, first: boolean, selected: boolean): HTMLTableCellElement {
  const look = STATES[cell.state];
  const shown = shownShare(cell);
  const share = cell.state === 'neither' ? '' : percent(shown);
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
  td.setAttribute('aria-label', `${row.client}, ${id}: ${look.text}${share === '' ? '' : `, ${share} ${base}`}${required}`);
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
    td.appendChild(errors);
  }
  return td;
}

/** Span names are `{method} {target}`. */
function target(name: string, method: string | null): string {
  if (method !== null && name.startsWith(`${method} `)) return name.slice(method.length + 1);
  return name === method ? '–' : name;
}

function declarationLine(row: MatrixRow): HTMLElement {
  const d = row.declaration;
  const part = (label: string, n: number, cls: string): HTMLElement => h('span', { class: `decl decl-${cls}`, title: `${label}: ${n} of ${row.requests} requests` }, `${label} ${integer(n)}`);
  return h('span', { class: 'declarations' }, part('declared', d.declared, 'declared'), ' · ', part('none', d.none, 'none'), ' · ', part('unknown', d.unknown, 'unknown'));
}

export const matrixView = new MatrixView();

/** What the answer left out: the API sends the busiest rows and ids up to its limits, and says how many there are. */
function cutText(matrix: { rows: unknown[]; rowsTotal: number; extensions: unknown[]; extensionsTotal: number }, rows: string): string {
  const cut = [
    matrix.rowsTotal > matrix.rows.length ? `the ${integer(matrix.rows.length)} busiest ${rows}` : '',
    matrix.extensionsTotal > matrix.extensions.length ? `the ${integer(matrix.extensions.length)} most used extensions` : '',
  ].filter((part) => part !== '');
  return cut.length === 0 ? '' : ` (shown: ${cut.join(' and ')}; filter or narrow the range for the rest)`;
}
