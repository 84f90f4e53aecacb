import { type AttributeSpec, RESOURCE_ATTRIBUTES, SPAN_ATTRIBUTES } from './attributes.js';
import { MAX_ATTRIBUTE_LENGTH, MAX_EXTENSION_ID_LENGTH, MAX_IDS_PER_REQUEST } from './limits.js';
import { METRICS, type MetricSpec } from './metrics.js';

/** Where the generated section sits in docs/contract.md. */
export const DOC_BEGIN = '<!-- contract:begin (generated from contract/ by `npm run docs:contract`; do not edit) -->';
export const DOC_END = '<!-- contract:end -->';

const code = (text: string): string => `\`${text}\``;
const cell = (text: string): string => text.replaceAll('|', '\\|');

function attributeRow(attribute: AttributeSpec | string): string {
  if (typeof attribute === 'string') return `| ${code(attribute)} | string | |`;
  const values = attribute.values === undefined ? '' : `${attribute.values.map(code).join(', ')}${attribute.closed ? '' : ', …'}: `;
  const flags = [attribute.mandatory && 'required'].filter(Boolean).join(', ');
  return `| ${code(attribute.name)} | ${attribute.type}${flags === '' ? '' : ` (${flags})`} | ${cell(values + attribute.brief)} |`;
}

function table(attributes: readonly (AttributeSpec | string)[]): string[] {
  return ['| attribute | type | values |', '| --- | --- | --- |', ...attributes.map(attributeRow)];
}

function metricSection(metric: MetricSpec): string[] {
  const kind = metric.instrument === 'counter' ? 'monotonic Sum (cumulative or delta)' : 'Gauge';
  const head = `**${code(metric.name)}** — ${kind}, unit ${code(metric.unit)}: ${metric.brief}.`;
  return metric.attributes.length === 0 ? [`${head} No attributes.`, ''] : [head, '', ...table(metric.attributes), ''];
}

/** The contract as Markdown: what a server in another language must send. */
export function renderContract(): string {
  const metrics = Object.values(METRICS) as MetricSpec[];
  const lines = [
    DOC_BEGIN,
    '',
    '**Resource**:',
    '',
    ...table(RESOURCE_ATTRIBUTES),
    '',
    ...metrics.filter((metric) => metric.stored).flatMap(metricSection),
    'Agent health (not stored by the collector; for your own backend):',
    '',
    ...metrics
      .filter((metric) => !metric.stored)
      .map((metric) => `- ${code(metric.name)} (${metric.attributes.map((a) => code(typeof a === 'string' ? a : a.name)).join(', ')}): ${metric.brief}.`),
    '',
    `Limits both sides apply: extension ids of at most ${MAX_EXTENSION_ID_LENGTH} characters matching the identifier grammar,`,
    `at most ${MAX_IDS_PER_REQUEST} ids per request and side, string values of at most ${MAX_ATTRIBUTE_LENGTH} characters.`,
    '',
    '**Spans** (kind SERVER, optional) follow the OpenTelemetry MCP conventions and add:',
    '',
    ...table(SPAN_ATTRIBUTES),
    '',
    DOC_END,
  ];
  return lines.join('\n');
}
