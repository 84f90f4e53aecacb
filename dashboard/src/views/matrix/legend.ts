import { h } from '../../lib/dom.js';
import { STATES } from '../../lib/matrix-model.js';

/** What the cells' symbols, shades and figures mean. */
export function legend(): HTMLElement {
  const shade = h('li', { class: 'legend-shade' }, 'Negotiated share: ', h('span', { class: 'shade-bar', 'aria-hidden': 'true' }), ' 0 % → 100 %');
  return h(
    'ul',
    { class: 'legend', 'aria-label': 'Legend' },
    ...(Object.keys(STATES) as (keyof typeof STATES)[]).map((state) =>
      h('li', { class: `state-${state}` }, h('span', { class: 'symbol', 'aria-hidden': 'true' }, STATES[state].symbol), ` ${STATES[state].text}`),
    ),
    shade,
    h('li', { class: 'legend-required' }, h('span', { class: 'required' }, '×n'), ' requests answered -32021 (a required capability missing) naming the id'),
    h(
      'li',
      null,
      'Cell figure: share of the row’s requests whose server’s declaration is known (requests answered before any server instance existed are counted apart). Declarations per row: declared / none (capabilities without extensions) / unknown (no capabilities received — not “unsupported”).',
    ),
  );
}
