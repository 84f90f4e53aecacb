import { h } from '../lib/dom.js';
import type { ChartSpec } from './charts.js';

/** Said where a chart, its summary or its table shows the steps whose counts are not final yet. */
export const PARTIAL_TEXT = 'not final yet';

/** The index in `times` of the API's `partialFrom` (the first step not final yet), if it is one of them. */
export function partialIndex(times: readonly string[], partialFrom: string | null): number | undefined {
  if (partialFrom === null) return undefined;
  const index = times.indexOf(partialFrom);
  return index < 0 ? undefined : index;
}

/**
 * A chart with its figures as a table too (in a disclosure), so nothing a chart says is only a picture. The
 * canvas is drawn once chart.js (its own chunk) has loaded.
 */
export function chartPanel(id: string, spec: ChartSpec, figuresSummary: string): HTMLElement {
  const partial = spec.partialFrom === undefined ? undefined : spec.labels[spec.partialFrom];
  const summary =
    partial === undefined ? figuresSummary : `${figuresSummary} Steps from ${partial} are ${PARTIAL_TEXT} (shaded): their points are still arriving.`;
  const axes = [spec.xTitle === undefined ? '' : ` Horizontal axis: ${spec.xTitle}.`, spec.yTitle === undefined ? '' : ` Vertical axis: ${spec.yTitle}.`].join(
    '',
  );
  const canvas = h('canvas', { id, role: 'img', 'aria-label': `${spec.title}. ${summary}${axes}` });
  const figure = h(
    'figure',
    { class: 'chart' },
    h('figcaption', null, spec.title),
    h('div', { class: 'chart-box' }, canvas),
    h('p', { class: 'chart-summary' }, summary),
    dataTable(spec),
  );
  void import('./charts.js').then(({ draw }) => draw(canvas, spec));
  return figure;
}

/**
 * Short tick labels for step start times (the browser's time zone): the time of day, with the date on the first
 * step and wherever the day changes, so that an axis is always dated.
 */
export function timeLabels(times: string[], stepMinutes: number): string[] {
  let lastDay = '';
  return times.map((iso) => {
    const date = new Date(iso);
    const pad = (n: number): string => String(n).padStart(2, '0');
    const day = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
    if (stepMinutes >= 1440) return day;
    const dated = day !== lastDay;
    lastDay = day;
    return `${dated ? `${day} ` : ''}${pad(date.getHours())}:${pad(date.getMinutes())}`;
  });
}

/** The time axis's title: the zone its times are in, and the step each point or bar covers. */
export function timeAxis(stepMinutes: number): string {
  const zone =
    new Intl.DateTimeFormat(undefined, { timeZoneName: 'short' }).formatToParts(new Date()).find((part) => part.type === 'timeZoneName')?.value ?? 'local time';
  const step = stepMinutes % 1440 === 0 ? `${stepMinutes / 1440}-day` : stepMinutes % 60 === 0 ? `${stepMinutes / 60}-hour` : `${stepMinutes}-minute`;
  return `start of each ${step} step (${zone})`;
}

/** Built when opened: a long range has hundreds of steps. */
function dataTable(spec: ChartSpec): HTMLElement {
  const details = h('details', { class: 'chart-data' }, h('summary', null, 'Figures as a table'));
  details.addEventListener('toggle', () => {
    if (details.open && details.childElementCount === 1) details.appendChild(figures(spec));
  });
  return details;
}

function figures(spec: ChartSpec): HTMLElement {
  const format = (value: number | null | undefined): string =>
    value === null || value === undefined ? '–' : spec.percent ? `${(value * 100).toFixed(1)} %` : String(value);
  return h(
    'div',
    { class: 'grid-wrap' },
    h(
      'table',
      null,
      h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Step'), ...spec.series.map((series) => h('th', { scope: 'col' }, series.label)))),
      h(
        'tbody',
        null,
        ...spec.labels.map((label, index) =>
          h(
            'tr',
            spec.partialFrom !== undefined && index >= spec.partialFrom ? { class: 'partial' } : null,
            h('th', { scope: 'row' }, label, spec.partialFrom !== undefined && index >= spec.partialFrom ? ` (${PARTIAL_TEXT})` : ''),
            ...spec.series.map((series) => h('td', null, format(series.data[index]))),
          ),
        ),
      ),
    ),
  );
}
