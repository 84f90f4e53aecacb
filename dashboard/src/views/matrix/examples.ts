import { at, externalLink, h } from '../../lib/dom.js';
import type { ExamplesResponse } from '../../lib/types.js';

/** The drill-down's example requests, one row each: what was asked, by whom, who answered, and how it went. */
export function examplesTable(list: ExamplesResponse['examples']): HTMLElement {
  return h(
    'table',
    { class: 'examples' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        ...['Time', 'Method', 'Target', 'Outcome', 'Client', 'Answered by', 'Declaration', 'Negotiated', 'Trace id', 'Duration'].map((text) =>
          h('th', { scope: 'col' }, text),
        ),
      ),
    ),
    h(
      'tbody',
      null,
      ...list.map((example) =>
        h(
          'tr',
          null,
          h('td', null, at(example.start)),
          h('td', null, example.method ?? '–'),
          h('td', null, target(example.name, example.method)),
          h('td', null, example.outcome ?? '–', example.statusCode === null ? '' : ` (${example.statusCode})`),
          h('td', null, example.clientName ?? '(unknown client)', example.clientVersion === null ? '' : `@${example.clientVersion}`),
          h('td', { class: 'answered-by' }, `${example.service ?? '(unknown service)'} / ${example.instanceId ?? '(unknown instance)'}`),
          h('td', null, example.clientDeclaration ?? '–'),
          h('td', { class: 'wrap negotiated' }, example.negotiated.length === 0 ? '–' : example.negotiated.join(', ')),
          // The trace in the tracing backend where a template is set (the API makes links of well-formed ids only).
          h(
            'td',
            { class: 'wrap trace' },
            externalLink(example.traceUrl, h('code', null, example.traceId), { class: 'trace-link' }) ?? h('code', null, example.traceId),
          ),
          h('td', null, `${example.durationMs.toFixed(1)} ms`),
        ),
      ),
    ),
  );
}

/** Span names are `{method} {target}`. */
function target(name: string, method: string | null): string {
  if (method !== null && name.startsWith(`${method} `)) return name.slice(method.length + 1);
  return name === method ? '–' : name;
}
