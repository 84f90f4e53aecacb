import { type Context, type ViewModule, namesOf } from '../../lib/context.js';
import { h, replace } from '../../lib/dom.js';
import { sliceMatrix } from '../../lib/matrix-model.js';
import { clientMatrixParams, matrixParams } from '../../lib/params.js';
import { GROUPS } from '../../lib/state.js';
import type { InstancesResponse, MatrixResponse } from '../../lib/types.js';
import type { Current } from './current.js';
import { DrillDown } from './drill.js';
import { MatrixGrid } from './grid.js';
import { legend } from './legend.js';
import { prefetchByInstance } from './prefetch.js';
import { emptyState, renderSummary } from './summary.js';
import { CellTooltip } from './tooltip.js';
import { Toolbar } from './toolbar.js';

/** The support matrix: clients × extension ids, with the drill-down to example requests below it. */
class MatrixView implements ViewModule {
  readonly rowsBy = GROUPS;
  private current!: Current;
  private toolbar!: Toolbar;
  private summary!: HTMLElement;
  private grid!: MatrixGrid;
  private drill!: DrillDown;
  /** A cell was opened from the grid: the keyboard goes to its example requests once they are shown. */
  private focusDrill = false;

  mount(root: HTMLElement, context: Context): void {
    // One for the view's life: the matrix on screen outlives a remount (back from another view) until the next update.
    this.current ??= { context, data: undefined };
    this.current.context = context;
    this.toolbar = new Toolbar(this.current);
    this.summary = h('p', { class: 'summary', 'aria-live': 'polite' });
    this.grid = new MatrixGrid(this.current, (found) => {
      this.focusDrill = true;
      this.current.context.navigate({ cellClient: found.row.client, cellExt: found.id });
    });
    const tooltip = new CellTooltip(this.current, this.grid);
    this.drill = new DrillDown(this.current);
    replace(
      root,
      h('div', { class: 'view-head' }, h('h2', null, 'Support matrix'), this.toolbar.element),
      legend(),
      this.summary,
      this.grid.element,
      this.toolbar.markdownDetails,
      this.drill.element,
      tooltip.element,
    );
  }

  async clientNames(context: Context): Promise<string[]> {
    return namesOf((await context.load<MatrixResponse>('matrix', clientMatrixParams(context.state))).rows);
  }

  async update(context: Context): Promise<void> {
    this.current.context = context;
    const { state } = context;
    this.toolbar.show(state);
    let matrix: MatrixResponse;
    let instances: InstancesResponse;
    try {
      [matrix, instances] = await Promise.all([
        context.load<MatrixResponse>('matrix', matrixParams(state)),
        context.load<InstancesResponse>('instances', { ended: 'true' }),
      ]);
    } catch (error) {
      if (context.isCurrent()) context.fail(error);
      return;
    }
    if (!context.isCurrent()) return;
    context.loaded();
    const slice = sliceMatrix(matrix, state);
    this.current.data = { matrix, slice };
    this.toolbar.matrixChanged();
    renderSummary(this.summary, matrix, slice, state);
    const empty = emptyState(matrix, slice, instances, state);
    if (empty !== null) replace(this.grid.element, empty);
    else this.grid.render(slice, state);
    if (!context.isCurrent()) return;
    if (empty === null) prefetchByInstance(context, state, instances);
    await this.drill.render(state, matrix);
    if (this.focusDrill && context.isCurrent()) {
      this.focusDrill = false;
      this.drill.focus();
    }
  }
}

export const matrixView = new MatrixView();
