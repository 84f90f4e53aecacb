import type { Finding } from './conditions/finding.js';
import type { Rule } from './rules/rule.js';
import { runbookUrl } from './runbooks.js';

/** `{{ $labels.name }}` and `{{ $value }}`, as in Prometheus' alert templates; anything else is left as written. */
const TEMPLATE = /\{\{\s*\$(labels\.([a-zA-Z_][a-zA-Z0-9_]*)|value)\s*\}\}/g;

function expand(template: string, labels: Readonly<Record<string, string>>, value: number): string {
  return template.replace(TEMPLATE, (whole, _what: string, label: string | undefined) => (label === undefined ? String(value) : (labels[label] ?? '')));
}

/**
 * The condition's own words (`summary`, `description`) and the kind's runbook (`runbook_url`), then the rule's
 * annotations, expanded: a rule may replace any of them. (Delivery adds `dashboard_url`, which needs the public URL.)
 */
export function annotate(rule: Rule, finding: Finding, labels: Readonly<Record<string, string>>): Record<string, string> {
  const annotations: Record<string, string> = { summary: finding.summary, description: finding.description, runbook_url: runbookUrl(rule.kind) };
  for (const [name, template] of Object.entries(rule.annotations)) annotations[name] = expand(template, labels, finding.value);
  return annotations;
}
