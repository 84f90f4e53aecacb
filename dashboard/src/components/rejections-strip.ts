import type { Context } from '../lib/context.js';
import { h, integer, replace } from '../lib/dom.js';
import type { RejectionsResponse } from '../lib/types.js';

/**
 * A notice above every view while the collector has refused data points (partial success) since it started: how
 * many, and by reason and service, with the API's explanation of each. Hidden when there are none. Service names
 * are the senders' own: rendered as text, as everything from telemetry.
 */
export class RejectionsStrip {
  readonly element = h('section', { class: 'notice rejections', id: 'rejections', 'aria-label': 'Refused data points', hidden: true });

  async update(context: Context): Promise<void> {
    let answer: RejectionsResponse;
    try {
      answer = await context.load<RejectionsResponse>('rejections');
    } catch {
      // A collector that cannot answer shows it in the view itself; the strip only adds to a working page.
      return;
    }
    if (!context.isCurrent()) return;
    this.element.hidden = answer.total === 0;
    if (answer.total === 0) {
      this.element.replaceChildren();
      return;
    }
    const since = new Date(answer.since);
    replace(
      this.element,
      h(
        'p',
        { class: 'notice-title' },
        `${integer(answer.total)} data point${answer.total === 1 ? ' was' : 's were'} refused since the collector started (`,
        h('time', { datetime: answer.since, title: answer.since }, since.toLocaleString()),
        '): the counts do not include them.',
      ),
      h(
        'details',
        null,
        h('summary', null, 'By reason and service'),
        h(
          'table',
          null,
          h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Service'), h('th', { scope: 'col' }, 'Points'), h('th', { scope: 'col' }, 'Why'))),
          h(
            'tbody',
            null,
            answer.rejections.map((row) =>
              h('tr', null, h('td', null, row.service ?? '(no service.name)'), h('td', { class: 'num' }, integer(row.points)), h('td', null, row.explanation)),
            ),
          ),
        ),
      ),
    );
  }
}
