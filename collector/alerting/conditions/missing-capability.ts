import type { RequiredSlot } from '../../store/query/trends.js';
import { parseDuration } from '../rules/duration.js';
import type { Rule } from '../rules/rule.js';
import { MS_PER_MINUTE } from '../../model/time.js';
import { type Finding, dashboardPath, figure, inScope, listed, viewRange } from './finding.js';
import type { Snapshot, Window } from './snapshot.js';

/**
 * Per service and extension id named in `-32021` answers (missing required client capability): answers per
 * minute over the window, from the clients in scope. Fires above `ratePerMinute`.
 */
function missingCapability(rule: Rule<'missing_capability'>, service: string, rows: readonly RequiredSlot[], window?: Window): Finding[] {
  const minutes = parseDuration(rule.options.window) / MS_PER_MINUTE;
  const byId = new Map<string, { count: number; clients: Set<string> }>();
  for (const row of rows) {
    if (row.id === null || !inScope(rule.scope, 'extensions', row.id) || !inScope(rule.scope, 'clients', row.name)) continue;
    const entry = byId.get(row.id) ?? { count: 0, clients: new Set<string>() };
    entry.count += row.count;
    if (row.name !== null) entry.clients.add(row.name);
    byId.set(row.id, entry);
  }
  const findings: Finding[] = [];
  for (const [id, { count, clients }] of [...byId].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const rate = count / minutes;
    if (!(rate > rule.options.ratePerMinute)) continue;
    findings.push({
      labels: { service, extension: id },
      value: Math.round(rate * 100) / 100,
      summary: `${service} answered ${figure(count)} requests with -32021 naming ${id} in the last ${rule.options.window}`,
      description: `${figure(rate)} missing-capability answers per minute name ${id} as required (above ${figure(rule.options.ratePerMinute)}); clients: ${clients.size === 0 ? 'without names' : listed([...clients].sort())}.`,
      dashboardPath: dashboardPath('extension', { ext: id, service, ...viewRange(window) }),
    });
  }
  return findings;
}

export async function evaluateMissingCapability(rule: Rule<'missing_capability'>, snapshot: Snapshot): Promise<Finding[]> {
  // Whole elapsed minutes: the minute under way holds only part of a minute's answers.
  const window = snapshot.window(parseDuration(rule.options.window));
  const findings: Finding[] = [];
  for (const service of await snapshot.services()) {
    if (inScope(rule.scope, 'services', service))
      findings.push(...missingCapability(rule, service, await snapshot.required(service, window.fromMs, window.toMs), window));
  }
  return findings;
}
