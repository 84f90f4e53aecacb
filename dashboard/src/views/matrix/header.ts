import type { Context } from '../../lib/context.js';
import { breakableId, h } from '../../lib/dom.js';
import type { MatrixSlice } from '../../lib/matrix-model.js';
import type { State } from '../../lib/state.js';
import { ROWS } from './rows.js';

/** The grid's header row: each column heading a sort button (a navigation), with the sort shown to the eye and in `aria-sort`. */
export function headerRow(slice: MatrixSlice, state: State, navigate: Context['navigate']): HTMLTableRowElement {
  const sortButton = (key: string, label: string | Node, description: string): HTMLElement => {
    const active = state.sort === key;
    const next = active && state.dir === 'desc' ? 'asc' : 'desc';
    const button = h(
      'button',
      { type: 'button', class: 'sort', 'data-sort': key, title: `Sort by ${description}` },
      label,
      h('span', { class: 'sort-mark', 'aria-hidden': 'true' }, active ? (state.dir === 'desc' ? ' ▼' : ' ▲') : ''),
    );
    button.addEventListener('click', () => navigate({ sort: key, dir: key === 'client' && !active ? 'asc' : next }));
    return button;
  };
  const ariaSort = (key: string): string | null => (state.sort === key ? (state.dir === 'asc' ? 'ascending' : 'descending') : null);
  return h(
    'tr',
    { 'aria-rowindex': 1 },
    h('th', { scope: 'col', class: 'corner', 'aria-sort': ariaSort('client') }, sortButton('client', ROWS[state.group].heading, ROWS[state.group].one)),
    h('th', { scope: 'col', class: 'requests', 'aria-sort': ariaSort('requests') }, sortButton('requests', 'Requests', 'requests')),
    ...slice.extensions.map(({ id }) =>
      h('th', { scope: 'col', class: 'ext', 'aria-sort': ariaSort(id) }, sortButton(id, h('span', { class: 'ext-id' }, breakableId(id)), id)),
    ),
  );
}
