import { isPseudoExtensionId } from '../../../contract/index.js';
import { SeriesKind } from '../../model/batches.js';
import type { CellTotal } from '../../model/records.js';
import { parseDuration } from '../rules/duration.js';
import type { Rule } from '../rules/rule.js';
import { type Finding, dashboardPath, inScope, listed } from './finding.js';
import { type Snapshot, floorMinute } from './snapshot.js';

/** Ids clients declared in these cells (the clients in scope, or any), with the client names that did. */
function declared(cells: readonly CellTotal[], clientIn: (name: string | null) => boolean): Map<string, Set<string>> {
  const ids = new Map<string, Set<string>>();
  for (const cell of cells) {
    if (
      cell.kind !== SeriesKind.Extension ||
      cell.clientDeclared !== true ||
      cell.count === 0 ||
      cell.extensionId === null ||
      isPseudoExtensionId(cell.extensionId)
    )
      continue;
    if (!clientIn(cell.clientName)) continue;
    const names = ids.get(cell.extensionId) ?? new Set<string>();
    if (cell.clientName !== null) names.add(cell.clientName);
    ids.set(cell.extensionId, names);
  }
  return ids;
}

/**
 * An extension id that clients (those in scope) declared in the window and no client declared in the lookback
 * before it, when there was traffic before it to compare with. Informational: it says what is new, and resolves by
 * itself once the id is no longer new.
 */
function newExtensionIds(rule: Rule<'new_extension_id'>, recent: readonly CellTotal[], before: readonly CellTotal[], service: string | undefined): Finding[] {
  // Nothing stored before the window (a new database, a new service): every id would look new; none is judged.
  if (!before.some((cell) => cell.kind === SeriesKind.Requests && cell.count > 0)) return [];
  const seen = declared(before, () => true);
  const findings: Finding[] = [];
  for (const [id, clients] of [...declared(recent, (name) => inScope(rule.scope, 'clients', name))].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (seen.has(id) || !inScope(rule.scope, 'extensions', id)) continue;
    const where = service === undefined ? '' : ` on ${service}`;
    findings.push({
      labels: { ...(service === undefined ? {} : { service }), extension: id },
      value: clients.size,
      summary: `New extension id ${id} declared by clients${where}`,
      description: `Clients (${clients.size === 0 ? 'without names' : listed([...clients].sort())}) declared ${id}${where} in the last ${rule.options.window}; no client declared it in the ${rule.options.lookback} before.`,
      dashboardPath: dashboardPath('extension', { ext: id, service }),
    });
  }
  return findings;
}

export async function evaluateNewExtensionId(rule: Rule<'new_extension_id'>, snapshot: Snapshot): Promise<Finding[]> {
  const split = floorMinute(snapshot.now - parseDuration(rule.options.window));
  const start = split - parseDuration(rule.options.lookback);
  const services = rule.scope.services === undefined ? [undefined] : [...rule.scope.services].sort();
  const findings: Finding[] = [];
  for (const service of services) {
    const [recent, before] = await Promise.all([snapshot.cells(service, split, snapshot.now), snapshot.cells(service, start, split)]);
    findings.push(...newExtensionIds(rule, recent, before, service));
  }
  return findings;
}
