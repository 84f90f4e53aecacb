import { chartPanel, partialIndex, timeAxis, timeLabels } from '../components/chart-panel.js';
import { type Context, type ViewModule, namesOf } from '../lib/context.js';
import { code, count, h, integer, notice, percent, replace, time } from '../lib/dom.js';
import { extensionMatrixParams, timeseriesParams, trendParams } from '../lib/params.js';
import { href, rangeLabel, scopeText } from '../lib/state.js';
import type { InstanceView, InstancesResponse, MatrixResponse, RequiredTrend, TimeseriesResponse } from '../lib/types.js';

/** One extension id: who declares it, who advertises it, its negotiated share over time, and `-32021`s naming it. */
class ExtensionView implements ViewModule {
  private body!: HTMLElement;
  private heading!: HTMLElement;

  mount(root: HTMLElement): void {
    this.heading = h('h2', null, 'Extension');
    this.body = h('div', { class: 'extension' });
    replace(root, this.heading, this.body);
  }

  async clientNames(context: Context): Promise<string[]> {
    return namesOf((await context.load<MatrixResponse>('matrix', extensionMatrixParams(context.state))).rows);
  }

  async update(context: Context): Promise<void> {
    const { state } = context;
    const id = state.ext;
    const link = (ext: string): HTMLElement => {
      const element = h('a', { href: href(state, { ext }), class: 'ext-id' }, ext);
      element.addEventListener('click', (event) => {
        event.preventDefault();
        context.navigate({ ext });
      });
      return element;
    };
    let matrix: MatrixResponse;
    let instances: InstancesResponse;
    try {
      [matrix, instances] = await Promise.all([
        // Rows of the client chosen only: the totals are then that client's, as an alert linking here measured them.
        context.load<MatrixResponse>('matrix', { ...extensionMatrixParams(state), client: state.client }),
        context.load<InstancesResponse>('instances'),
      ]);
    } catch (error) {
      if (context.isCurrent()) context.fail(error);
      return;
    }
    if (!context.isCurrent()) return;
    if (id === '') {
      context.loaded();
      replace(this.heading, 'Extension');
      const known = [...new Set([...matrix.extensions, ...instances.instances.flatMap((instance) => instance.advertises.map((entry) => entry.id))])].sort();
      replace(
        this.body,
        known.length === 0
          ? notice('empty', 'No extension id seen yet.', 'Ids appear once a client declares one or a server advertises one.')
          : h('div', null, h('p', null, 'Choose an extension:'), h('ul', { class: 'ext-list' }, ...known.map((ext) => h('li', null, link(ext))))),
      );
      return;
    }
    let series: TimeseriesResponse;
    let required: RequiredTrend;
    try {
      [series, required] = await Promise.all([
        context.load<TimeseriesResponse>('timeseries', timeseriesParams(state, id)),
        context.load<RequiredTrend>('trends/required', { ...trendParams(state), extension: id }),
      ]);
    } catch (error) {
      if (context.isCurrent()) context.fail(error);
      return;
    }
    if (!context.isCurrent()) return;
    context.loaded();
    replace(this.heading, 'Extension ', h('span', { class: 'ext-id' }, id));
    const index = matrix.extensions.indexOf(id);
    const rows = index < 0 ? [] : matrix.rows.filter((row) => state.client === '' || row.name === state.client);
    const declaring = rows
      .map((row) => ({ row, cell: row.extensions[index] }))
      .filter(({ cell }) => cell !== undefined && cell.clientDeclared > 0)
      .sort((a, b) => (b.cell?.clientDeclared ?? 0) - (a.cell?.clientDeclared ?? 0));
    const advertising = instances.instances.filter(
      (instance) => instance.advertises.some((entry) => entry.id === id) && (state.service === '' || instance.service === state.service),
    );
    // Live instances whose service's other instances advertise the id and they do not (the collector decides who is off).
    const lacking = instances.instances.filter(
      (instance) => (instance.drift?.lacks.includes(id) ?? false) && (state.service === '' || instance.service === state.service),
    );
    // The figures of the matrix (the collector's, over the requests whose server's declaration is known).
    const total = index < 0 ? undefined : matrix.totals[index];
    const totals = {
      requests: total?.known ?? 0,
      negotiated: total?.negotiated ?? 0,
      declared: total?.clientDeclared ?? 0,
      advertised: total?.serverAdvertised ?? 0,
      share: total?.negotiatedShare ?? null,
    };
    const named = required.extensions.find((entry) => entry.id === id)?.total ?? 0;
    const intro = h(
      'p',
      { class: 'summary' },
      `${rangeLabel(state)}, ${scopeText(state)}: negotiated on ${integer(totals.negotiated)} of ${integer(totals.requests)} requests (${percent(totals.share, 1)}); declared by the client on ${integer(totals.declared)}, advertised by the server on ${integer(totals.advertised)}; named by ${count(named, '-32021 answer')}.`,
    );
    const declaredTable =
      declaring.length === 0
        ? notice('empty', 'No client declared this extension in the range.')
        : h(
            'table',
            { class: 'list' },
            h('thead', null, h('tr', null, ...['Client', 'Requests', 'Declared it', 'Negotiated'].map((text) => h('th', { scope: 'col' }, text)))),
            h(
              'tbody',
              null,
              ...declaring.map(({ row, cell }) =>
                h(
                  'tr',
                  null,
                  h('th', { scope: 'row' }, row.client),
                  h('td', null, integer(row.requests)),
                  h('td', null, `${integer(cell?.clientDeclared ?? 0)} (${percent(cell?.clientShare)})`),
                  h('td', null, `${integer(cell?.negotiated ?? 0)} (${percent(cell?.negotiatedShare)})`),
                ),
              ),
            ),
          );
    const advertisedTable =
      advertising.length === 0
        ? notice('empty', 'No instance advertises this extension now.')
        : h(
            'table',
            { class: 'list' },
            h(
              'thead',
              null,
              h('tr', null, ...['Service', 'Instance', 'Server', 'Settings fingerprints', 'Last seen'].map((text) => h('th', { scope: 'col' }, text))),
            ),
            h(
              'tbody',
              null,
              ...advertising.map((instance) =>
                h(
                  'tr',
                  { class: instance.drift?.settingsDiffer.includes(id) === true ? 'drift' : '' },
                  h('td', null, instance.service ?? '–'),
                  h(
                    'th',
                    { scope: 'row', class: 'mono' },
                    instance.instanceId ?? '–',
                    instance.drift?.settingsDiffer.includes(id) === true ? h('span', { class: 'badge badge-drift' }, 'settings differ') : null,
                  ),
                  h('td', null, instance.serverName ?? '–', instance.serverVersion ? `@${instance.serverVersion}` : ''),
                  h('td', { class: 'mono' }, (instance.advertises.find((entry) => entry.id === id)?.fingerprints ?? []).join(', ') || '–'),
                  h('td', null, time(instance.lastSeen)),
                ),
              ),
            ),
          );
    const lackingTable =
      lacking.length === 0
        ? notice('empty', 'No live instance lacks this extension while others of its service advertise it.')
        : h(
            'table',
            { class: 'list lacking' },
            h('thead', null, h('tr', null, ...['Service', 'Instance', 'Server', 'Its service', 'Last seen'].map((text) => h('th', { scope: 'col' }, text)))),
            h(
              'tbody',
              null,
              ...lacking.map((instance) =>
                h(
                  'tr',
                  { class: 'drift' },
                  h('td', null, instance.service ?? '–'),
                  h('th', { scope: 'row', class: 'mono' }, instance.instanceId ?? '–', ' ', h('span', { class: 'badge badge-drift' }, `lacks ${id}`)),
                  h('td', null, instance.serverName ?? '–', instance.serverVersion ? `@${instance.serverVersion}` : ''),
                  h('td', null, driftText(instance)),
                  h('td', null, time(instance.lastSeen)),
                ),
              ),
            ),
          );
    const requiredByClient = required.extensions.find((entry) => entry.id === id);
    const requiredBlock =
      requiredByClient === undefined || requiredByClient.total === 0
        ? notice(
            'empty',
            'No -32021 answer named this extension in the range.',
            'A server answers ',
            code('-32021'),
            ' when a request lacks a client capability it requires.',
          )
        : h(
            'div',
            null,
            chartPanel(
              'chart-ext-required',
              {
                kind: 'bar',
                title: `-32021 answers naming ${id}`,
                labels: timeLabels(required.times, required.stepMinutes),
                partialFrom: partialIndex(required.times, required.partialFrom),
                xTitle: timeAxis(required.stepMinutes),
                yTitle: 'answers per step',
                series: [{ label: '-32021 answers', data: requiredByClient.counts }],
              },
              `${count(requiredByClient.total, 'answer')}.`,
            ),
            h(
              'table',
              { class: 'list' },
              h('thead', null, h('tr', null, h('th', { scope: 'col' }, 'Client'), h('th', { scope: 'col' }, '-32021 answers'))),
              h(
                'tbody',
                null,
                ...requiredByClient.clients.map((client) => h('tr', null, h('th', { scope: 'row' }, client.client), h('td', null, integer(client.count)))),
              ),
            ),
          );
    replace(
      this.body,
      intro,
      h('section', null, h('h3', null, 'Declared by clients'), declaredTable),
      h('section', null, h('h3', null, 'Advertised by instances'), advertisedTable),
      h('section', null, h('h3', null, 'Lacked by instances'), lackingTable),
      h(
        'section',
        null,
        h('h3', null, 'Negotiated share over time'),
        chartPanel(
          'chart-ext-share',
          {
            kind: 'line',
            percent: true,
            title: `Negotiated share of ${id}`,
            labels: timeLabels(
              series.points.map((point) => point.t),
              series.stepMinutes,
            ),
            partialFrom: partialIndex(
              series.points.map((point) => point.t),
              series.partialFrom,
            ),
            xTitle: timeAxis(series.stepMinutes),
            yTitle: 'negotiated share',
            series: [{ label: 'negotiated share', data: series.points.map((point) => point.negotiatedShare) }],
          },
          `Overall ${percent(totals.share, 1)} (steps of ${series.stepMinutes} min).`,
        ),
      ),
      h('section', null, h('h3', null, 'Missing-capability errors (-32021)'), requiredBlock),
    );
  }
}

/** `1 of 2 live instances` and whether the others are a majority or the other side of a split. */
function driftText(instance: InstanceView): string {
  const drift = instance.drift;
  if (drift === null || drift === undefined) return '–';
  return `${drift.members} of ${drift.live} live instances (${drift.role === 'split' ? 'a split: no majority' : 'the majority advertises it'})`;
}

export const extensionView = new ExtensionView();
