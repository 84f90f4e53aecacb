import { type Context, type ViewModule, namesOf } from '../lib/context.js';
import { at, code, count, h, hidden, integer, localTime, notice, percent, replace, time } from '../lib/dom.js';
import { changesParams, matrixParams } from '../lib/params.js';
import { type State, scopeText } from '../lib/state.js';
import type { ChangesResponse, MatrixResponse } from '../lib/types.js';

/**
 * What changed: the collector compares two equal, adjacent periods (the chosen range, ending now, against as long
 * just before it; analysis/changes.ts) and ranks what changed by the requests it affects. This view only says it.
 */

type Change = ChangesResponse['changes'][number];

const KIND_TEXT: Record<Change['kind'], string> = {
  stopped_declaring: '▼ stopped declaring',
  started_declaring: '▲ started declaring',
  share_moved: 'share moved',
  stopped_advertising: '− stopped advertising',
  started_advertising: '+ started advertising',
};

function describe(change: Change): string {
  if (change.kind === 'share_moved') {
    const delta = ((change.after ?? 0) - (change.before ?? 0)) * 100;
    return `${delta > 0 ? '▲ +' : '▼ −'}${Math.abs(delta).toFixed(0)} points (${percent(change.before)} → ${percent(change.after)})`;
  }
  return `${KIND_TEXT[change.kind]}${change.previous === undefined ? '' : ` (${change.previous} did)`}`;
}

const minutes = (ms: number): string => {
  const total = Math.round(ms / 60_000);
  return total < 120 ? count(total, 'minute') : total < 2 * 1440 ? count(Math.round(total / 60), 'hour') : count(Math.round(total / 1440), 'day');
};

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
      h(
        'div',
        { class: 'view-head' },
        h('h2', null, 'What changed'),
        h('div', { class: 'toolbar' }, h('div', { class: 'field' }, h('label', { for: 'threshold' }, 'A share moved by more than (points)'), this.threshold)),
      ),
      this.body,
    );
  }

  async clientNames(context: Context): Promise<string[]> {
    return namesOf((await context.load<MatrixResponse>('matrix', matrixParams(context.state))).rows);
  }

  async update(context: Context): Promise<void> {
    this.context = context;
    const { state } = context;
    if (document.activeElement !== this.threshold) this.threshold.value = String(state.threshold);
    let answer: ChangesResponse;
    try {
      answer = await context.load<ChangesResponse>('changes', changesParams(state));
    } catch (error) {
      if (context.isCurrent()) context.fail(error);
      return;
    }
    if (!context.isCurrent()) return;
    context.loaded();
    const keep = (change: Change): boolean =>
      (state.client === '' || change.subject === state.client || change.subject.startsWith(`${state.client}@`)) &&
      (state.cols === '' || change.id.toLowerCase().includes(state.cols.toLowerCase()));
    const changes = answer.changes.filter(keep);
    // No requests yet: that is the one thing to say about them (not also that nothing changed).
    if (answer.historyFrom === null) {
      replace(this.body, this.noData(), answer.instances.length === 0 ? null : this.instances(answer.instances));
      return;
    }
    const header = h(
      'p',
      { class: 'summary' },
      'Earlier: ',
      at(answer.before.from),
      ' – ',
      at(answer.before.to),
      ` (${count(answer.before.requests, 'request')}). Later: `,
      at(answer.after.from),
      ' – ',
      at(answer.after.to),
      ` (${count(answer.after.requests, 'request')}). ${scopeText(state)}. Ranked by the requests each change affects.`,
    );
    replace(this.body, header, this.history(answer.historyFrom, answer.before), this.list(changes, state), this.instances(answer.instances));
  }

  private noData(): HTMLElement {
    return notice(
      'empty',
      'No data yet.',
      'Start an MCP server with the agent (',
      code('node --import @extscope/agent/register server.js'),
      '), pointed at this collector: changes appear once two periods hold requests.',
    );
  }

  /** On a young install, how much history there is to compare with. */
  private history(historyFrom: string, before: ChangesResponse['before']): HTMLElement | null {
    const from = Date.parse(historyFrom);
    if (from <= Date.parse(before.from)) return null;
    return notice(
      'info',
      `Data since ${localTime(from)} (${minutes(Date.now() - from)} of history).`,
      'The earlier period begins before that: it is partly empty, so a change may only be the start of the data. A shorter range compares two full periods.',
    );
  }

  private list(changes: Change[], state: State): HTMLElement {
    if (changes.length === 0)
      return notice(
        'info',
        `Nothing changed: no client version stopped or started declaring an id, and no share moved by more than ${state.threshold} points.`,
      );
    return h(
      'div',
      null,
      h('h3', null, `${count(changes.length, 'change')}`),
      h(
        'table',
        { class: 'list moved-list' },
        h('thead', null, h('tr', null, ...['Client', 'Extension', 'Change', 'Requests affected'].map((text) => h('th', { scope: 'col' }, text)))),
        h(
          'tbody',
          null,
          ...changes
            .slice(0, 100)
            .map((change) =>
              h(
                'tr',
                { class: `change change-${change.kind}`, 'data-kind': change.kind, 'data-client': change.subject, 'data-ext': change.id },
                h('th', { scope: 'row' }, change.subject),
                h('td', { class: 'ext-id' }, change.id),
                h('td', null, describe(change), change.kind === 'share_moved' ? hidden(' negotiated share') : null),
                h('td', { class: 'num' }, integer(change.requests)),
              ),
            ),
        ),
      ),
    );
  }

  private instances(changes: Change[]): HTMLElement {
    return h(
      'section',
      { class: 'advertising-changes' },
      h('h3', null, 'Instances that started or stopped advertising an id'),
      changes.length === 0
        ? notice('info', 'No instance started or stopped advertising an extension in these periods.')
        : h(
            'table',
            { class: 'list' },
            h('thead', null, h('tr', null, ...['Change', 'Extension', 'Service', 'Build', 'Instance', 'When'].map((text) => h('th', { scope: 'col' }, text)))),
            h(
              'tbody',
              null,
              ...changes.map((change) =>
                h(
                  'tr',
                  null,
                  h('td', null, KIND_TEXT[change.kind]),
                  h('td', { class: 'ext-id' }, change.id),
                  h('td', null, change.service ?? '–'),
                  h('td', { class: 'build' }, change.build ?? '–'),
                  h('td', { class: 'mono' }, change.subject),
                  h('td', null, change.at === undefined ? '–' : time(change.at)),
                ),
              ),
            ),
          ),
    );
  }
}

export const changesView = new ChangesView();
