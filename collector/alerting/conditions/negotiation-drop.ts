import { buildMatrix } from '../../analysis/matrix.js';
import { share } from '../../analysis/share.js';
import type { CellTotal } from '../../model/records.js';
import { parseDuration } from '../rules/duration.js';
import type { Rule } from '../rules/rule.js';
import { type Finding, dashboardPath, inScope, points } from './finding.js';
import { type Snapshot, floorMinute } from './snapshot.js';

/** Requests and, per extension id, negotiated requests: of one client, or summed over the clients in scope. */
interface Tally {
  client: string | undefined;
  requests: number;
  negotiated: Map<string, number>;
}

function tallies(rule: Rule<'negotiation_drop'>, cells: readonly CellTotal[]): Map<string, Tally> {
  const view = buildMatrix(cells, 'client');
  const byKey = new Map<string, Tally>();
  for (const row of view.rows) {
    if (!inScope(rule.scope, 'clients', row.name)) continue;
    const key = rule.options.perClient ? row.client : '';
    let tally = byKey.get(key);
    if (tally === undefined) byKey.set(key, (tally = { client: rule.options.perClient ? row.client : undefined, requests: 0, negotiated: new Map() }));
    tally.requests += row.requests;
    for (const cell of row.extensions) {
      if (inScope(rule.scope, 'extensions', cell.id)) tally.negotiated.set(cell.id, (tally.negotiated.get(cell.id) ?? 0) + cell.negotiated);
    }
  }
  return byKey;
}

/**
 * Per service (and client, with `perClient`) and extension id: the negotiated share of requests in the recent
 * window against the baseline before it. Fires when it fell by at least `drop` points, both windows holding at
 * least `minRequests` requests (a quiet hour pages nobody).
 */
export function negotiationDrop(rule: Rule<'negotiation_drop'>, service: string, recentCells: readonly CellTotal[], baselineCells: readonly CellTotal[]): Finding[] {
  const recent = tallies(rule, recentCells);
  const baseline = tallies(rule, baselineCells);
  const findings: Finding[] = [];
  for (const [key, before] of baseline) {
    const now = recent.get(key);
    if (now === undefined || before.requests < rule.options.minRequests || now.requests < rule.options.minRequests) continue;
    for (const [id, negotiatedBefore] of before.negotiated) {
      const shareBefore = share(negotiatedBefore, before.requests) ?? 0;
      const shareNow = share(now.negotiated.get(id) ?? 0, now.requests) ?? 0;
      const drop = (shareBefore - shareNow) * 100;
      // Compared in whole thousandths of a point, so that 20 points down is "at least 20" despite binary fractions.
      if (Math.round(drop * 1000) < Math.round(rule.options.drop * 1000)) continue;
      const who = before.client === undefined ? service : `${before.client} on ${service}`;
      findings.push({
        labels: before.client === undefined ? { service, extension: id } : { service, client: before.client, extension: id },
        value: Math.round(drop * 10) / 10,
        summary: `${id} negotiated on ${points(shareNow)} of ${who}'s requests, down from ${points(shareBefore)}`,
        description: `Over the last ${rule.options.window}, ${id} was negotiated on ${points(shareNow)} of ${now.requests} requests (${who}); over the ${rule.options.baseline} before, on ${points(shareBefore)} of ${before.requests}: ${drop.toFixed(1)} points down.`,
        dashboardPath: dashboardPath('extension', { ext: id, service, client: before.client }),
      });
    }
  }
  return findings;
}

export async function evaluateNegotiationDrop(rule: Rule<'negotiation_drop'>, snapshot: Snapshot): Promise<Finding[]> {
  const split = floorMinute(snapshot.now - parseDuration(rule.options.window));
  const start = split - parseDuration(rule.options.baseline);
  const findings: Finding[] = [];
  for (const service of await snapshot.services()) {
    if (!inScope(rule.scope, 'services', service)) continue;
    const [recent, baseline] = await Promise.all([snapshot.cells(service, split, snapshot.now), snapshot.cells(service, start, split)]);
    findings.push(...negotiationDrop(rule, service, recent, baseline));
  }
  return findings;
}
