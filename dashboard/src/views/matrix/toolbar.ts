import { getJson, getText } from '../../lib/api.js';
import { h } from '../../lib/dom.js';
import { download } from '../../lib/download.js';
import { type MarkdownMeaning, matrixMarkdown } from '../../lib/matrix-model.js';
import { matrixExportParams } from '../../lib/params.js';
import { type State, scopeText } from '../../lib/state.js';
import type { MatrixResponse } from '../../lib/types.js';
import type { Current } from './current.js';
import { ROWS } from './rows.js';

/**
 * The matrix's own controls: the row and column text filters (typing replaces the history entry), the exports, and
 * the Markdown table below the grid with its choice of what a yes means.
 */
export class Toolbar {
  readonly element: HTMLElement;
  /** The Markdown table's disclosure (placed below the grid). */
  readonly markdownDetails: HTMLDetailsElement;
  private readonly rowFilter: HTMLInputElement;
  private readonly rowFilterLabel: HTMLLabelElement;
  private readonly colFilter: HTMLInputElement;
  private readonly markdownBox: HTMLTextAreaElement;
  private readonly meaning: HTMLSelectElement;
  private typing: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly current: Current) {
    this.rowFilter = h('input', { type: 'search', id: 'matrix-rows', autocomplete: 'off', spellcheck: 'false' });
    this.colFilter = h('input', { type: 'search', id: 'matrix-cols', placeholder: 'e.g. tasks', autocomplete: 'off', spellcheck: 'false' });
    const onType = (): void => {
      clearTimeout(this.typing);
      this.typing = setTimeout(() => this.current.context.navigate({ rows: this.rowFilter.value, cols: this.colFilter.value }, 'replace'), 30);
    };
    this.rowFilter.addEventListener('input', onType);
    this.colFilter.addEventListener('input', onType);
    this.meaning = h(
      'select',
      { id: 'markdown-meaning' },
      h('option', { value: 'negotiated' }, 'Markdown: yes = negotiated'),
      h('option', { value: 'declared' }, 'Markdown: yes = declared by the client'),
    );
    const button = (label: string, action: () => void): HTMLButtonElement => {
      const element = h('button', { type: 'button' }, label);
      element.addEventListener('click', action);
      return element;
    };
    this.markdownBox = h('textarea', { id: 'markdown-output', readonly: true, rows: 8, 'aria-label': 'Markdown table', spellcheck: 'false' });
    this.markdownDetails = h(
      'details',
      { class: 'markdown' },
      h('summary', null, 'Markdown table (in the shape of the official support matrix)'),
      this.markdownBox,
    );
    this.markdownDetails.addEventListener('toggle', () => {
      if (this.markdownDetails.open) this.markdownBox.value = this.markdown();
    });
    this.meaning.addEventListener('change', () => (this.markdownBox.value = this.markdown()));
    this.element = h(
      'div',
      { class: 'toolbar' },
      h('div', { class: 'field' }, (this.rowFilterLabel = h('label', { for: 'matrix-rows' }, 'Filter clients')), this.rowFilter),
      h('div', { class: 'field' }, h('label', { for: 'matrix-cols' }, 'Filter extensions'), this.colFilter),
      h(
        'div',
        { class: 'exports', role: 'group', 'aria-label': 'Export' },
        button('CSV', () => void this.export('csv')),
        button('JSON', () => void this.export('json')),
        button('Markdown', () => this.current.data && download('extscope-support-matrix.md', 'text/markdown', this.markdown())),
        h('label', { for: 'markdown-meaning', class: 'visually-hidden' }, 'What a yes (✅) in the Markdown table means'),
        this.meaning,
      ),
    );
  }

  /** The filters as the state has them, except the one being typed in. */
  show(state: State): void {
    if (document.activeElement !== this.rowFilter) this.rowFilter.value = state.rows;
    if (document.activeElement !== this.colFilter) this.colFilter.value = state.cols;
    this.rowFilterLabel.textContent = `Filter ${ROWS[state.group].many}`;
    this.rowFilter.placeholder = ROWS[state.group].example;
  }

  /** A new matrix is on screen: an open Markdown table follows it. */
  matrixChanged(): void {
    if (this.markdownDetails.open) this.markdownBox.value = this.markdown();
  }

  /** The exports are the collector's (one CSV writer, the same figures as the API), with the page's filters. */
  private async export(format: 'csv' | 'json'): Promise<void> {
    const params = matrixExportParams(this.current.context.state);
    if (format === 'csv') download('extscope-matrix.csv', 'text/csv', await getText('matrix', { ...params, format: 'csv' }));
    else download('extscope-matrix.json', 'application/json', `${JSON.stringify(await getJson<MatrixResponse>('matrix', params), null, 2)}\n`);
  }

  private markdown(): string {
    const { data, context } = this.current;
    if (data === undefined) return '';
    return matrixMarkdown(data.matrix, data.slice, this.meaning.value as MarkdownMeaning, scopeText(context.state), ROWS[context.state.group].heading);
  }
}
