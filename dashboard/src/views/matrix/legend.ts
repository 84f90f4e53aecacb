import { h } from '../../lib/dom.js';
import { STATES } from '../../lib/matrix-model.js';

/** What the cells' figures, symbols and shades mean: one line, the details one click away. */
export function legend(): HTMLElement {
  const shade = h('li', { class: 'legend-shade' }, h('span', { class: 'shade-bar', 'aria-hidden': 'true' }), ' 0 → 100 %');
  return h(
    'ul',
    { class: 'legend', 'aria-label': 'Legend' },
    h('li', { class: 'legend-figure' }, h('strong', null, 'Cell: % negotiated')),
    ...(Object.keys(STATES) as (keyof typeof STATES)[]).map((state) =>
      h('li', { class: `state-${state}` }, h('span', { class: 'symbol', 'aria-hidden': 'true' }, STATES[state].symbol), ` ${STATES[state].text}`),
    ),
    shade,
    h('li', { class: 'legend-required' }, h('span', { class: 'required' }, '×n'), ' answered -32021 naming it'),
    h(
      'li',
      { class: 'legend-more' },
      h(
        'details',
        null,
        h('summary', null, 'What the figures count'),
        h(
          'p',
          null,
          'A cell’s figure is always its negotiated share: of the row’s requests whose server’s declaration is known, those on which the client declared the id and the answering server advertised it (requests answered before any server instance existed are counted apart). A cell that was never negotiated shows 0 %; its tooltip gives the shares that declared and advertised it. The shade follows the negotiated share. ×n: requests answered -32021 (a required client capability missing) naming the id.',
        ),
        h('p', null, 'Declarations per row: declared / none (capabilities without extensions) / unknown (no capabilities received — not “unsupported”).'),
      ),
    ),
  );
}
