import type { MatrixView } from '../../analysis/matrix.js';
import { declarationChange, lastTwo } from '../../analysis/versions.js';
import { parseDuration } from '../rules/duration.js';
import type { Rule } from '../rules/rule.js';
import { type Finding, dashboardPath, figure, inScope, viewRange } from './finding.js';
import type { Snapshot, Window } from './snapshot.js';

/**
 * Per client name: the newest version seen in the window against the one before it (in the order of
 * analysis/versions.ts). Each extension id the previous version declared on at least `minRequests` requests and the
 * newest on none of at least `minRequests` requests of its own is a regression (one stray request of either version
 * pages nobody). The alert links to the matrix by name@version over the window the rule read.
 */
function clientRegression(rule: Rule<'client_regression'>, view: MatrixView, service: string | undefined, window?: Window): Finding[] {
  const byName = new Map<string, typeof view.rows>();
  for (const row of view.rows) {
    if (row.name === null || row.version === null || row.requests === 0 || !inScope(rule.scope, 'clients', row.name)) continue;
    byName.set(row.name, [...(byName.get(row.name) ?? []), row]);
  }
  const findings: Finding[] = [];
  for (const [name, rows] of byName) {
    const pair = lastTwo(rows, (row) => row.version ?? '');
    if (pair === undefined) continue;
    const [previous, newest] = pair;
    view.extensions.forEach((id, index) => {
      if (!inScope(rule.scope, 'extensions', id)) return;
      const before = previous.extensions[index]?.clientDeclared ?? 0;
      const now = newest.extensions[index]?.clientDeclared ?? 0;
      const change = declarationChange(
        { requests: previous.requests, declared: before },
        { requests: newest.requests, declared: now },
        rule.options.minRequests,
      );
      if (change !== 'stopped') return;
      findings.push({
        labels: {
          ...(service === undefined ? {} : { service }),
          client: name,
          version: newest.version ?? '',
          previous_version: previous.version ?? '',
          extension: id,
        },
        value: newest.requests,
        summary: `${name} ${newest.version} no longer declares ${id}`,
        description: `${name} ${previous.version} declared ${id} on ${figure(before)} requests; ${name} ${newest.version} declared it on none of its ${figure(newest.requests)} requests (last ${rule.options.window}).`,
        dashboardPath: dashboardPath('matrix', { group: 'client_version', rows: name, service, ...viewRange(window) }),
      });
    });
  }
  return findings;
}

export async function evaluateClientRegression(rule: Rule<'client_regression'>, snapshot: Snapshot): Promise<Finding[]> {
  const window = snapshot.window(parseDuration(rule.options.window));
  const read = (service: string | undefined): Promise<MatrixView> => snapshot.matrix(service, window.fromMs, window.toMs, 'client_version');
  // Across the fleet, unless the rule names services: then per service.
  if (rule.scope.services === undefined) return clientRegression(rule, await read(undefined), undefined, window);
  const findings: Finding[] = [];
  for (const service of [...rule.scope.services].sort()) findings.push(...clientRegression(rule, await read(service), service, window));
  return findings;
}
