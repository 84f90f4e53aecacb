import { splitTable } from '../../components/instance-split.js';
import { code, h, integer, notice, replace } from '../../lib/dom.js';
import { cellOf, describeCell } from '../../lib/matrix-model.js';
import { cellSplitParams, examplesParams } from '../../lib/params.js';
import { type State, byInstance, href } from '../../lib/state.js';
import type { ExamplesResponse, InstanceSplitResponse, MatrixResponse, MatrixRow } from '../../lib/types.js';
import type { Current } from './current.js';
import { examplesTable } from './examples.js';

/**
 * Below the grid, the opened row or cell (`cell.client`, `cell.ext` in the URL): its counts, its split across
 * instances, and its newest example requests, with a link to the extension's page.
 */
export class DrillDown {
  readonly element: HTMLElement = h('section', { class: 'drill', 'aria-label': 'Example requests' });

  constructor(private readonly current: Current) {}

  /** Moves the keyboard to the drill-down's title (a cell was opened from the grid). */
  focus(): void {
    this.element.querySelector<HTMLElement>('#drill-title')?.focus();
  }

  async render(state: State, matrix: MatrixResponse): Promise<void> {
    if (state.cellClient === '') {
      replace(this.element);
      return;
    }
    const row = matrix.rows.find((candidate) => candidate.client === state.cellClient);
    const close = h('a', { href: href(state, { cellClient: '', cellExt: '' }), class: 'close' }, 'Close');
    close.addEventListener('click', (event) => {
      event.preventDefault();
      this.current.context.navigate({ cellClient: '', cellExt: '' });
    });
    const title = h('h3', { id: 'drill-title', tabindex: -1 }, 'Example requests: ', state.cellClient, state.cellExt === '' ? '' : ' × ', state.cellExt);
    if (row === undefined) {
      replace(this.element, title, close, notice('empty', `No requests for ${state.cellClient} in this range.`));
      return;
    }
    const extLink =
      state.cellExt === ''
        ? null
        : h('a', { href: href(state, { view: 'extension', ext: state.cellExt, cellClient: '', cellExt: '' }) }, 'Extension page for ', state.cellExt);
    extLink?.addEventListener('click', (event) => {
      event.preventDefault();
      this.current.context.navigate({ view: 'extension', ext: state.cellExt, cellClient: '', cellExt: '' });
    });
    const instances = byInstance(state.group);
    let examples: ExamplesResponse;
    let split: HTMLElement | null = null;
    try {
      const examplesLoad = this.current.context.load<ExamplesResponse>('examples', examplesParams(state, row));
      split = await this.splitOf(state, row);
      examples = await examplesLoad;
    } catch (error) {
      replace(this.element, title, close, notice('error', 'Example requests could not be loaded.', String((error as Error).message)));
      return;
    }
    if (!this.current.context.isCurrent()) return;
    // The API narrows by service, client and version: a row by instance, the unnamed row and an unversioned row are picked out here.
    const list = examples.examples
      .filter((example) => {
        if (state.group === 'instance') return example.instanceId === row.instance;
        if (instances) return true;
        return (row.name === null ? example.clientName === null : true) && (state.group === 'client' || row.version !== null || example.clientVersion === null);
      })
      .slice(0, 20);
    const counts =
      state.cellExt === '' ? null : h('p', null, describeCell(row, cellOf(row, matrix.extensions.indexOf(state.cellExt), state.cellExt)).join(' · '));
    if (list.length === 0) {
      replace(
        this.element,
        title,
        close,
        counts,
        split,
        notice(
          'empty',
          'No example requests.',
          'Examples come from spans: the agent sends them unless ',
          code('EXTSCOPE_SPANS=false'),
          ' or trace sampling drops them; the newest five per cell are kept for 7 days. Counts above always come from the metrics.',
        ),
        extLink,
      );
      return;
    }
    replace(this.element, title, close, counts, split, h('div', { class: 'examples-wrap' }, examplesTable(list)), extLink);
  }

  /** The opened cell across the instances that answered it; nothing for a whole row. */
  private async splitOf(state: State, row: MatrixRow): Promise<HTMLElement | null> {
    if (state.cellExt === '') return null;
    if (row.summedRows !== undefined)
      return notice('empty', `This row sums the ${integer(row.summedRows)} least busy rows past the row limit: filter the rows to see their instances.`);
    const split = await this.current.context.load<InstanceSplitResponse>('matrix/cell', cellSplitParams(state, row, state.cellExt));
    return splitTable(split);
  }
}
