import { type MatrixCell, type MatrixView, extensionTotals } from '../../analysis/matrix.js';
import { knownRequests } from '../../analysis/share.js';
import { MS_PER_MINUTE } from '../../model/time.js';
import { parseDuration } from '../rules/duration.js';
import type { Rule } from '../rules/rule.js';
import { type Finding, dashboardPath, figure, inScope, points, viewRange } from './finding.js';
import type { Snapshot, Window } from './snapshot.js';

/** Per id, the totals of one client's rows (or of every client in scope): the cells the matrix serves for them. */
interface Tally {
  client: string | undefined;
  /** The requests the shares are over (analysis/share.ts). */
  known: number;
  ids: Map<string, MatrixCell>;
}

function tallies(rule: Rule<'negotiation_drop'>, view: MatrixView): Map<string, Tally> {
  const rowsByKey = new Map<string, { client: string | undefined; rows: MatrixView['rows'] }>();
  for (const row of view.rows) {
    if (!inScope(rule.scope, 'clients', row.name)) continue;
    const key = rule.options.perClient ? row.client : '';
    let entry = rowsByKey.get(key);
    if (entry === undefined) rowsByKey.set(key, (entry = { client: rule.options.perClient ? row.client : undefined, rows: [] }));
    entry.rows.push(row);
  }
  const byKey = new Map<string, Tally>();
  for (const [key, { client, rows }] of rowsByKey) {
    const ids = new Map<string, MatrixCell>();
    for (const cell of extensionTotals({ ...view, rows })) if (inScope(rule.scope, 'extensions', cell.id)) ids.set(cell.id, cell);
    byKey.set(key, { client, known: rows.reduce((sum, row) => sum + knownRequests(row.requests, row.serverUnknown), 0), ids });
  }
  return byKey;
}

/**
 * Per service (and client, with `perClient`) and extension id: the negotiated share in the recent window against
 * the baseline before it, both as the matrix serves it (over the requests whose server's declaration is known,
 * analysis/share.ts). Fires when it fell by at least `drop` points, both windows holding at least `minRequests` such
 * requests (a quiet hour pages nobody). The alert links to the extension's page over the recent window.
 */
function negotiationDrop(rule: Rule<'negotiation_drop'>, service: string, recentView: MatrixView, baselineView: MatrixView, recentWindow?: Window): Finding[] {
  const recent = tallies(rule, recentView);
  const baseline = tallies(rule, baselineView);
  const findings: Finding[] = [];
  for (const [key, before] of baseline) {
    const now = recent.get(key);
    if (now === undefined) continue;
    for (const [id, cellBefore] of before.ids) {
      const cellNow = now.ids.get(id);
      const knownBefore = before.known;
      const knownNow = now.known;
      if (knownBefore < rule.options.minRequests || knownNow < rule.options.minRequests) continue;
      const shareBefore = cellBefore.negotiatedShare ?? 0;
      const shareNow = cellNow?.negotiatedShare ?? 0;
      const drop = (shareBefore - shareNow) * 100;
      // Compared in whole thousandths of a point, so that 20 points down is "at least 20" despite binary fractions.
      if (Math.round(drop * 1000) < Math.round(rule.options.drop * 1000)) continue;
      const who = before.client === undefined ? service : `${before.client} on ${service}`;
      findings.push({
        labels: before.client === undefined ? { service, extension: id } : { service, client: before.client, extension: id },
        value: Math.round(drop * 10) / 10,
        summary: `${id} negotiated on ${points(shareNow)} of ${who}'s requests, down from ${points(shareBefore)}`,
        description: `Over the last ${rule.options.window}, ${id} was negotiated on ${points(shareNow)} of ${figure(knownNow)} requests (${who}); over the ${rule.options.baseline} before, on ${points(shareBefore)} of ${figure(knownBefore)}: ${drop.toFixed(1)} points down.`,
        dashboardPath: dashboardPath('extension', {
          ext: id,
          service,
          client: before.client === undefined ? undefined : (recentView.rows.find((row) => row.client === before.client)?.name ?? undefined),
          ...viewRange(recentWindow),
        }),
      });
    }
  }
  return findings;
}

export async function evaluateNegotiationDrop(rule: Rule<'negotiation_drop'>, snapshot: Snapshot): Promise<Finding[]> {
  const recent = snapshot.window(parseDuration(rule.options.window));
  const baseline = { fromMs: recent.fromMs - Math.max(MS_PER_MINUTE, parseDuration(rule.options.baseline)), toMs: recent.fromMs };
  const findings: Finding[] = [];
  for (const service of await snapshot.services()) {
    if (!inScope(rule.scope, 'services', service)) continue;
    const [recentView, baselineView] = await Promise.all([
      snapshot.matrix(service, recent.fromMs, recent.toMs, 'client'),
      snapshot.matrix(service, baseline.fromMs, baseline.toMs, 'client'),
    ]);
    findings.push(...negotiationDrop(rule, service, recentView, baselineView, recent));
  }
  return findings;
}
