import { splitLines } from '../../components/instance-split.js';
import { h, integer, replace } from '../../lib/dom.js';
import { describeCell } from '../../lib/matrix-model.js';
import { cellSplitParams } from '../../lib/params.js';
import type { InstanceSplitResponse } from '../../lib/types.js';
import type { Current } from './current.js';
import type { FoundCell, MatrixGrid } from './grid.js';

/** Instances a cell's tooltip names (the drill-down lists more). */
const TOOLTIP_SPLIT = 3;

/**
 * The tooltip of the cell under the pointer or the keyboard: what the cell counts in words, then, after a short
 * pause, its busiest instances.
 */
export class CellTooltip {
  readonly element: HTMLElement = h('div', { class: 'tooltip', role: 'tooltip', id: 'cell-tooltip', hidden: true });
  /** The cell the tooltip describes, and the pause before its split is asked for. */
  private tooltipFor: HTMLElement | undefined;
  private splitTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly current: Current,
    private readonly grid: MatrixGrid,
  ) {
    grid.element.addEventListener('focusin', (event) => this.show(event.target as HTMLElement));
    grid.element.addEventListener('focusout', () => this.hide());
    grid.element.addEventListener('mouseover', (event) => this.show(event.target as HTMLElement));
    grid.element.addEventListener('mouseleave', () => this.hide());
  }

  private show(target: HTMLElement): void {
    const element = target.closest<HTMLElement>('td[data-col]');
    if (element === null) return;
    const found = this.grid.cellAt(element);
    if (found === undefined) return;
    // The pointer moving within a cell fires again: the tooltip (and its split, loading or loaded) stays.
    if (this.tooltipFor === element && !this.element.hidden) return;
    this.tooltipFor = element;
    const lines = describeCell(found.row, found.cell);
    const split = h('div', { class: 'tooltip-split-box' });
    replace(
      this.element,
      h('p', { class: 'tooltip-title' }, found.row.client, ' × ', found.id),
      ...lines.map((line) => h('p', null, line)),
      split,
      h('p', { class: 'tooltip-hint' }, 'Enter or click: example requests'),
    );
    this.element.hidden = false;
    this.grid.element.querySelector('[aria-describedby="cell-tooltip"]')?.removeAttribute('aria-describedby');
    element.setAttribute('aria-describedby', 'cell-tooltip');
    this.place(element);
    clearTimeout(this.splitTimer);
    if (found.row.summedRows !== undefined) {
      replace(
        split,
        h('p', null, `This row sums the ${integer(found.row.summedRows)} least busy rows past the row limit: filter the rows to see their instances.`),
      );
      return;
    }
    // A short pause first: sweeping the pointer across the grid asks for nothing.
    replace(split, h('p', { class: 'tooltip-split-title' }, 'Across instances: …'));
    this.splitTimer = setTimeout(() => void this.fillSplit(element, found, split), 150);
  }

  /** Beside the cell, below it, or above it when below would leave the window. */
  private place(element: HTMLElement): void {
    const box = element.getBoundingClientRect();
    const width = 300;
    const left = Math.min(window.scrollX + box.right + 8, window.scrollX + document.documentElement.clientWidth - width - 8);
    this.element.style.left = `${Math.max(8, left)}px`;
    const height = this.element.offsetHeight;
    const below = box.bottom + 4 + height <= document.documentElement.clientHeight || box.top - 4 - height < 0;
    this.element.style.top = `${window.scrollY + (below ? box.bottom + 4 : box.top - 4 - height)}px`;
  }

  /** The cell's split across instances into its tooltip, if the tooltip still shows that cell (the drill-down reuses the load). */
  private async fillSplit(element: HTMLElement, found: FoundCell, into: HTMLElement): Promise<void> {
    const { context } = this.current;
    try {
      const split = await context.load<InstanceSplitResponse>('matrix/cell', cellSplitParams(context.state, found.row, found.id));
      if (this.tooltipFor !== element) return;
      replace(into, ...splitLines(split, TOOLTIP_SPLIT));
    } catch {
      if (this.tooltipFor !== element) return;
      replace(into, h('p', { class: 'tooltip-split-title' }, 'Across instances: could not be loaded.'));
    }
    this.place(element);
  }

  private hide(): void {
    clearTimeout(this.splitTimer);
    this.tooltipFor = undefined;
    this.element.hidden = true;
  }
}
