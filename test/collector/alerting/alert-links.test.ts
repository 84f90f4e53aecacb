/**
 * What every alert carries for on-call, in-process: `runbook_url` (a section of docs/runbooks.md per rule kind),
 * the `dashboard_url` delivery adds, a rule's own of either, and figures written for people.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { annotate } from '../../../collector/alerting/annotations.js';
import { figure } from '../../../collector/alerting/conditions/finding.js';
import { dashboardLink, notifiedAnnotations } from '../../../collector/alerting/delivery/dashboard-link.js';
import { parseRules } from '../../../collector/alerting/rules/load.js';
import { RUNBOOKS_URL, runbookUrl } from '../../../collector/alerting/runbooks.js';
import { RULE_KINDS } from '../../../collector/model/alerts.js';
import { ROOT } from '../../support/processes.js';

const finding = { labels: { client: 'cursor' }, value: 3, summary: 'the summary', description: 'the description', dashboardPath: '/?view=fleet' };

function rule(yaml: string) {
  const outcome = parseRules(yaml, 'rules.yaml');
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.errors));
  return outcome.rules.rules[0]!;
}

describe('runbooks', () => {
  it('each rule kind has a section of docs/runbooks.md, named after it, with what it means, likely causes and what to check', () => {
    const sections = new Map(
      readFileSync(join(ROOT, 'docs', 'runbooks.md'), 'utf8')
        .split(/^## /m)
        .slice(1)
        .map((part) => [part.slice(0, part.indexOf('\n')), part] as const),
    );
    expect([...sections.keys()].sort()).toEqual([...RULE_KINDS].sort());
    for (const kind of RULE_KINDS) {
      // The heading is the anchor the link names (`## client_regression` → `#client_regression`).
      expect(runbookUrl(kind)).toBe(`${RUNBOOKS_URL}#${kind}`);
      for (const part of ['**What it means.**', '**Likely causes.**', '**What to check.**']) expect(sections.get(kind), `${kind}: ${part}`).toContain(part);
    }
  });

  it('the runbooks are the docs of the repository the package names', () => {
    const { homepage } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { homepage: string };
    expect(RUNBOOKS_URL).toBe(`${homepage.replace(/#readme$/, '')}/blob/main/docs/runbooks.md`);
  });

  it("every alert carries its kind's runbook_url; a rule's own annotation replaces it, templated", () => {
    expect(annotate(rule('rules:\n  - { name: regression, kind: client_regression }\n'), finding, finding.labels)).toEqual({
      summary: 'the summary',
      description: 'the description',
      runbook_url: `${RUNBOOKS_URL}#client_regression`,
    });
    const own = rule(
      'rules:\n  - { name: regression, kind: client_regression, annotations: { runbook_url: "https://wiki.example.com/{{ $labels.client }}" } }\n',
    );
    expect(annotate(own, finding, finding.labels)['runbook_url']).toBe('https://wiki.example.com/cursor');
  });
});

describe('the dashboard link', () => {
  const PUBLIC = 'https://extscope.example.com/base/';
  it("is the condition's view under the public URL, added to the annotations", () => {
    const alert = { annotations: { summary: 's' }, dashboardPath: '/?view=fleet&service=api' };
    expect(dashboardLink(PUBLIC, alert)).toBe('https://extscope.example.com/base/?view=fleet&service=api');
    expect(notifiedAnnotations(PUBLIC, alert)).toEqual({ summary: 's', dashboard_url: 'https://extscope.example.com/base/?view=fleet&service=api' });
  });

  it("is the rule's own dashboard_url where it sets one: a path under the public URL, a full URL as it is", () => {
    const path = { annotations: { dashboard_url: '/?view=matrix&rows=cursor' }, dashboardPath: '/?view=fleet' };
    expect(dashboardLink(PUBLIC, path)).toBe('https://extscope.example.com/base/?view=matrix&rows=cursor');
    const full = { annotations: { dashboard_url: 'https://grafana.example.com/d/extscope' }, dashboardPath: '/?view=fleet' };
    expect(notifiedAnnotations(PUBLIC, full)['dashboard_url']).toBe('https://grafana.example.com/d/extscope');
  });
});

describe('figures for people', () => {
  it('groups thousands and keeps no more decimals than three significant digits need', () => {
    expect([36, 36.4, 36.0001, 1.2, 1.25, 0.05, 0.123, 12_345, 0].map(figure)).toEqual(['36', '36.4', '36', '1.2', '1.25', '0.05', '0.12', '12,345', '0']);
  });
});
