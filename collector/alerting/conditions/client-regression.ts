import { buildMatrix } from '../../analysis/matrix.js';
import type { CellTotal } from '../../model/records.js';
import { parseDuration } from '../rules/duration.js';
import type { Rule } from '../rules/rule.js';
import { type Finding, dashboardPath, inScope } from './finding.js';
import { type Snapshot, floorMinute } from './snapshot.js';

/** Versions in order: numeric parts as numbers (1.10 after 1.9), whatever scheme a client uses. */
const versionOrder = new Intl.Collator('en', { numeric: true, sensitivity: 'base' }).compare;

/**
 * Per client name: the newest version seen in the window against the one before it. Each extension id the
 * previous version declared on some request and the newest on none (over at least `minRequests` requests of
 * its own) is a regression.
 */
export function clientRegression(rule: Rule<'client_regression'>, cells: readonly CellTotal[], service: string | undefined): Finding[] {
  const view = buildMatrix(cells, 'client_version');
  const byName = new Map<string, typeof view.rows>();
  for (const row of view.rows) {
    if (row.name === null || row.version === null || row.requests === 0 || !inScope(rule.scope, 'clients', row.name)) continue;
    byName.set(row.name, [...(byName.get(row.name) ?? []), row]);
  }
  const findings: Finding[] = [];
  for (const [name, rows] of byName) {
    if (rows.length < 2) continue;
    const [previous, newest] = [...rows].sort((a, b) => versionOrder(a.version ?? '', b.version ?? '')).slice(-2);
    if (previous === undefined || newest === undefined || newest.requests < rule.options.minRequests) continue;
    view.extensions.forEach((id, index) => {
      if (!inScope(rule.scope, 'extensions', id)) return;
      const before = previous.extensions[index]?.clientDeclared ?? 0;
      const now = newest.extensions[index]?.clientDeclared ?? 0;
      if (before === 0 || now > 0) return;
      findings.push({
        labels: { ...(service === undefined ? {} : { service }), client: name, version: newest.version ?? '', previous_version: previous.version ?? '', extension: id },
        value: newest.requests,
        summary: `${name} ${newest.version} no longer declares ${id}`,
        description: `${name} ${previous.version} declared ${id} on ${before} requests; ${name} ${newest.version} declared it on none of its ${newest.requests} requests (last ${rule.options.window}).`,
        dashboardPath: dashboardPath('matrix', { group: 'client_version', rows: name, service }),
      });
    });
  }
  return findings;
}

export async function evaluateClientRegression(rule: Rule<'client_regression'>, snapshot: Snapshot): Promise<Finding[]> {
  const from = floorMinute(snapshot.now - parseDuration(rule.options.window));
  // Across the fleet, unless the rule names services: then per service.
  if (rule.scope.services === undefined) return clientRegression(rule, await snapshot.cells(undefined, from, snapshot.now), undefined);
  const findings: Finding[] = [];
  for (const service of [...rule.scope.services].sort()) findings.push(...clientRegression(rule, await snapshot.cells(service, from, snapshot.now), service));
  return findings;
}
