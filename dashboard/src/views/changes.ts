import { type Context, type ViewModule, namesOf } from '../context.js';
import { h, hidden, integer, notice, replace } from '../dom.js';
import { type State, absoluteRange } from '../state.js';
import type { InstancesResponse, MatrixResponse, MatrixRow } from '../types.js';
import { scopeText } from './matrix.js';

/**
 * What changed: the chosen range (default the last 24 h) against the same length just before it. Every cell
 * whose negotiated share moved by more than the threshold is marked, with both values; below, the instances
 * that started or stopped advertising an id in that time.
 */

const RELATIVE: Record<Exclude<State['range'], 'custom'>, { before: { from: string; to: string }; after: { from: string } }> = {
  '15m': { before: { from: '-30m', to: '-15m' }, after: { from: '-15m' } },
  '1h': { before: { from: '-2h', to: '-1h' }, after: { from: '-1h' } },
  '24h': { before: { from: '-48h', to: '-24h' }, after: { from: '-24h' } },
  '7d': { before: { from: '-14d', to: '-7d' }, after: { from: '-7d' } },
};

function periods(state: State): { before: Record<string, string>; after: Record<string, string> } {
  if (state.range !== 'custom') return RELATIVE[state.range];
  const { fromMs, toMs } = absoluteRange(state);
  const iso = (ms: number): string => new Date(ms).toISOString();
  return { before: { from: iso(fromMs - (toMs - fromMs)), to: iso(fromMs) }, after: { from: iso(fromMs), to: iso(toMs) } };
}

interface Moved {
  client: string;
  id: string;
  before: number | null;
  after: number | null;
  delta: number;
}

const shareOf = (row: MatrixRow | undefined, id: string): { share: number | null; negotiated: number; requests: number } => {
  // The matrix's own figures (the collector's, over the requests whose server's declaration is known).
  const cell = row?.extensions.find((entry) => entry.id === id);
  const known = row === undefined ? 0 : Math.max(0, row.requests - row.serverUnknown);
  return { share: cell === undefined ? (known === 0 ? null : 0) : cell.negotiatedShare, negotiated: cell?.negotiated ?? 0, requests: cell?.known ?? known };
};

const pct = (value: number | null): string => (value === null ? '–' : `${(value * 100).toFixed(0)} %`);

class ChangesView implements ViewModule {
  private body!: HTMLElement;
  private threshold!: HTMLInputElement;
  private context!: Context;

  mount(root: HTMLElement, context: Context): void {
    this.context = context;
    this.threshold = h('input', { type: 'number', id: 'threshold', min: 1, max: 100, step: 1, inputmode: 'numeric' });
    this.threshold.addEventListener('change', () => {
      const value = Number(this.threshold.value);
      if (Number.isFinite(value) && value >= 1 && value <= 100) this.context.navigate({ threshold: value });
    });
    this.body = h('div', { class: 'changes' });
    replace(
      root,
      h('h2', null, 'What changed'),
      h('div', { class: 'toolbar' }, h('div', { class: 'field' }, h('label', { for: 'threshold' }, 'Mark moves of more than (points)'), this.threshold)),
      this.body,
    );
  }

  async clientNames(context: Context): Promise<string[]> {
    const { state } = context;
    return namesOf((await context.load<MatrixResponse>('matrix', { ...periods(state).after, service: state.service, instance: state.instance, group: state.group })).rows);
  }

  async update(context: Context): Promise<void> {
    this.context = context;
    const { state } = context;
    if (document.activeElement !== this.threshold) this.threshold.value = String(state.threshold);
    const { before, after } = periods(state);
    const common = { service: state.service, instance: state.instance, group: state.group };
    let a: MatrixResponse;
    let b: MatrixResponse;
    let instances: InstancesResponse;
    try {
      [a, b, instances] = await Promise.all([context.load<MatrixResponse>('matrix', { ...before, ...common }), context.load<MatrixResponse>('matrix', { ...after, ...common }), context.load<InstancesResponse>('instances')]);
    } catch (error) {
      if (context.isCurrent()) context.fail(error);
      return;
    }
    if (!context.isCurrent()) return;
    context.loaded();
    const keep = (row: MatrixRow): boolean => (state.client === '' || row.name === state.client) && (state.rows === '' || row.client.toLowerCase().includes(state.rows.toLowerCase()));
    const rowsA = new Map(a.rows.filter(keep).map((row) => [row.client, row]));
    const rowsB = new Map(b.rows.filter(keep).map((row) => [row.client, row]));
    const clients = [...new Set([...rowsB.keys(), ...rowsA.keys()])];
    clients.sort((x, y) => (rowsB.get(y)?.requests ?? 0) - (rowsB.get(x)?.requests ?? 0) || (x < y ? -1 : 1));
    const ids = [...new Set([...b.extensions, ...a.extensions])].filter((id) => state.cols === '' || id.toLowerCase().includes(state.cols.toLowerCase())).sort();
    const threshold = state.threshold / 100;
    const moved: Moved[] = [];
    const header = h(
      'p',
      { class: 'summary' },
      `Before: ${a.from} – ${a.to}. After: ${b.from} – ${b.to}. ${scopeText(state)}. Cells show the negotiated share before → after; `,
      `cells that moved by more than ${state.threshold} points are marked ▲ or ▼.`,
    );
    if (clients.length === 0) {
      replace(this.body, header, notice('empty', 'No requests in either range.', 'Choose a longer time range or clear the filters.'), this.advertising(instances, state));
      return;
    }
    const head = h('tr', null, h('th', { scope: 'col' }, 'Client'), h('th', { scope: 'col' }, 'Requests before → after'), ...ids.map((id) => h('th', { scope: 'col', class: 'ext' }, h('span', { class: 'ext-id' }, id))));
    const body = h('tbody');
    for (const client of clients) {
      const rowA = rowsA.get(client);
      const rowB = rowsB.get(client);
      const tr = h('tr', null, h('th', { scope: 'row' }, client), h('td', null, `${integer(rowA?.requests ?? 0)} → ${integer(rowB?.requests ?? 0)}`));
      for (const id of ids) {
        const before = shareOf(rowA, id);
        const after = shareOf(rowB, id);
        const delta = (after.share ?? 0) - (before.share ?? 0);
        const isMoved = Math.abs(delta) > threshold && !(before.share === null && after.share === null);
        if (isMoved) moved.push({ client, id, before: before.share, after: after.share, delta });
        const title = `${client} × ${id}: negotiated ${integer(before.negotiated)} of ${integer(before.requests)} before, ${integer(after.negotiated)} of ${integer(after.requests)} after`;
        tr.appendChild(
          h(
            'td',
            { class: `delta${isMoved ? (delta > 0 ? ' moved up' : ' moved down') : ''}`, title, 'data-client': client, 'data-ext': id },
            isMoved ? h('span', { class: 'symbol', 'aria-hidden': 'true' }, delta > 0 ? '▲ ' : '▼ ') : null,
            `${pct(before.share)} → ${pct(after.share)}`,
            isMoved ? hidden(` moved ${delta > 0 ? 'up' : 'down'} by ${Math.abs(delta * 100).toFixed(0)} points`) : null,
          ),
        );
      }
      body.appendChild(tr);
    }
    moved.sort((x, y) => Math.abs(y.delta) - Math.abs(x.delta));
    const list =
      moved.length === 0
        ? notice('info', `No cell moved by more than ${state.threshold} points.`)
        : h(
            'div',
            null,
            h('h3', null, `${moved.length} cell(s) moved by more than ${state.threshold} points`),
            h(
              'table',
              { class: 'list moved-list' },
              h('thead', null, h('tr', null, ...['Client', 'Extension', 'Before', 'After', 'Change'].map((text) => h('th', { scope: 'col' }, text)))),
              h(
                'tbody',
                null,
                ...moved.slice(0, 100).map((entry) =>
                  h('tr', null, h('th', { scope: 'row' }, entry.client), h('td', { class: 'ext-id' }, entry.id), h('td', null, pct(entry.before)), h('td', null, pct(entry.after)), h('td', null, `${entry.delta > 0 ? '▲ +' : '▼ −'}${Math.abs(entry.delta * 100).toFixed(0)} points${entry.before === null ? ' (no requests before)' : entry.after === null ? ' (no requests after)' : ''}`)),
                ),
              ),
            ),
          );
    replace(this.body, header, list, h('div', { class: 'grid-wrap' }, h('table', { class: 'matrix changes-grid' }, h('thead', null, head), body)), this.advertising(instances, state));
  }

  /** Per instance and id: the first and last time it was advertised, from the instances' history. */
  private advertising(response: InstancesResponse, state: State): HTMLElement {
    const now = Date.now();
    const { fromMs, toMs } = state.range === 'custom' ? absoluteRange(state) : absoluteRange(state, now);
    const beforeFrom = fromMs - (toMs - fromMs);
    const events: { kind: 'started' | 'stopped'; service: string; instance: string; id: string; at: string; newInstance: boolean }[] = [];
    for (const instance of response.instances) {
      if (state.service !== '' && instance.service !== state.service) continue;
      if (state.instance !== '' && instance.instanceId !== state.instance) continue;
      const perId = new Map<string, { first: number; last: number; current: boolean }>();
      for (const entry of instance.history) {
        const seen = perId.get(entry.id) ?? { first: Infinity, last: -Infinity, current: false };
        seen.first = Math.min(seen.first, Date.parse(entry.firstSeen));
        seen.last = Math.max(seen.last, Date.parse(entry.lastSeen));
        seen.current ||= entry.current;
        perId.set(entry.id, seen);
      }
      for (const [id, seen] of perId) {
        const base = { service: instance.service ?? '–', instance: instance.instanceId ?? '–', id };
        if (seen.first >= fromMs && seen.first <= toMs) events.push({ ...base, kind: 'started', at: new Date(seen.first).toISOString(), newInstance: Date.parse(instance.firstSeen) >= fromMs });
        if (!seen.current && seen.last >= beforeFrom && seen.last <= toMs) events.push({ ...base, kind: 'stopped', at: new Date(seen.last).toISOString(), newInstance: false });
      }
    }
    events.sort((x, y) => (x.at < y.at ? 1 : -1));
    return h(
      'section',
      { class: 'advertising-changes' },
      h('h3', null, 'Instances that started or stopped advertising an id'),
      events.length === 0
        ? notice('info', 'No instance started or stopped advertising an extension in this time.')
        : h(
            'table',
            { class: 'list' },
            h('thead', null, h('tr', null, ...['Change', 'Extension', 'Service', 'Instance', 'When'].map((text) => h('th', { scope: 'col' }, text)))),
            h(
              'tbody',
              null,
              ...events.map((event) =>
                h(
                  'tr',
                  null,
                  h('td', null, event.kind === 'started' ? '+ started' : '− stopped', event.newInstance ? ' (new instance)' : ''),
                  h('td', { class: 'ext-id' }, event.id),
                  h('td', null, event.service),
                  h('td', { class: 'mono' }, event.instance),
                  h('td', null, h('time', { datetime: event.at }, event.at)),
                ),
              ),
            ),
          ),
    );
  }
}

export const changesView = new ChangesView();
