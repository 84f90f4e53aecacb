/**
 * The Grafana dashboard's data links (deploy/grafana/dashboards/extscope.json), read by the page's own URL state
 * (dashboard/src/lib/state.ts): each opens the view it names, for Grafana's time range, with the clicked series' or
 * row's values percent-encoded, and sets only parameters the page reads.
 */
import { describe, expect, it } from 'vitest';
import { parseState, serializeState } from '../../../dashboard/src/lib/state.js';
import json from '../../../deploy/grafana/dashboards/extscope.json' with { type: 'json' };

interface Link {
  title: string;
  url: string;
}

const dashboard = json as unknown as {
  links: Link[];
  panels: { id: number; targets: { expr: string }[]; fieldConfig?: { defaults: { links?: Link[] } } }[];
};

describe('the Grafana dashboard’s links', () => {
  it('links every panel to the matching view of extscope’s page, for the same time range, with the values percent-encoded', () => {
    const base = 'http://extscope.example:4318';
    const from = '2026-01-02T03:04:05.000Z';
    const to = '2026-01-02T09:04:05.000Z';
    // What Grafana puts in a link: the variable, the range's ends in ISO 8601, and the clicked series' label or
    // row's field, percent-encoded. The values here have characters a URL must escape.
    const valueOf = (path: string): string => `${path.replace(/\W+/g, '-')} a&b=c/é`;
    const interpolate = (url: string): string =>
      url.replace(/\$\{([^}:]+)(?::([\w:]+))?\}/g, (_match, path: string, format: string | undefined) => {
        if (path === 'extscope_url') return base;
        if (path === '__from' && format === 'date:iso') return from;
        if (path === '__to' && format === 'date:iso') return to;
        expect(path, url).toMatch(/^__field\.labels\.\w+$|^__data\.fields(?:\.\w+|\[0\])$|^__field\.name$/);
        expect(format, `${path} in ${url}`).toBe('percentencode');
        return encodeURIComponent(valueOf(path));
      });
    const views = new Set<string>();
    const links = [
      ...dashboard.links.map((link) => ({ where: 'dashboard', link, labels: [] as string[] })),
      ...dashboard.panels.flatMap((panel) => {
        const panelLinks = panel.fieldConfig?.defaults.links ?? [];
        expect(panelLinks.length, `panel ${panel.id}`).toBeGreaterThan(0);
        // The labels a link may name: those its queries keep (sum by …).
        const labels = panel.targets.flatMap((target) => [...target.expr.matchAll(/by \(([^)]*)\)/g)].flatMap(([, names]) => (names ?? '').split(/,\s*/)));
        return panelLinks.map((link) => ({ where: `panel ${panel.id}`, link, labels }));
      }),
    ];
    for (const { where, link, labels } of links) {
      for (const [, label] of link.url.matchAll(/\$\{__(?:field\.labels|data\.fields)\.(\w+)/g)) expect(labels, `${where}: ${link.url}`).toContain(label);
      const url = new URL(interpolate(link.url));
      expect(`${url.origin}${url.pathname}`, where).toBe(`${base}/`);
      const state = parseState(url.search);
      expect([state.range, state.from, state.to], where).toEqual(['custom', from, to]);
      views.add(state.view);
      // Every parameter the link sets is one the page reads, with the value given (the page leaves its defaults
      // out of its own URLs, so the round trip keeps the rest).
      const sent = [...url.searchParams].filter(([key, value]) => !(key === 'view' && value === 'matrix'));
      expect(sent.sort(), `${where}: ${link.url}`).toEqual([...new URLSearchParams(serializeState(state))].sort());
      for (const [key, value] of url.searchParams)
        if (!['view', 'group', 'range', 'from', 'to'].includes(key)) expect(value, `${where} ${key}`).toMatch(/ a&b=c\/é$/);
    }
    expect([...views].sort()).toEqual(['alerts', 'extension', 'fleet', 'matrix']);
  });
});
