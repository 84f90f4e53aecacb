import { isLive } from '../../analysis/fleet.js';
import type { InstanceRecord } from '../../model/records.js';
import { parseDuration } from '../rules/duration.js';
import type { Rule } from '../rules/rule.js';
import { type Finding, dashboardPath, inScope, orNone } from './finding.js';
import type { Snapshot } from './snapshot.js';

const live = (record: InstanceRecord, now: number, staleAfterMs: number): boolean => isLive(record, now, staleAfterMs);
const currentIds = (record: InstanceRecord): Set<string> => new Set(record.advertised.filter((row) => row.current).map((row) => row.extensionId));

/**
 * An extension advertised within the lookback that is no longer advertised: by any live instance of its service
 * (`level: service`), or by one live instance that advertised it before (`level: instance`). A service with no
 * live instance left is the stale-instance rule's business, not this one's.
 */
function extensionWithdrawn(rule: Rule<'extension_withdrawn'>, records: readonly InstanceRecord[], now: number, staleAfterMs: number): Finding[] {
  const since = now - parseDuration(rule.options.lookback);
  const findings: Finding[] = [];
  const relevant = records.filter((record) => record.service !== null && inScope(rule.scope, 'services', record.service));
  if (rule.options.level === 'instance') {
    for (const record of relevant) {
      if (!live(record, now, staleAfterMs)) continue;
      const current = currentIds(record);
      const withdrawn = new Set(
        record.advertised
          .filter((row) => !row.current && row.lastSeenMs >= since && !current.has(row.extensionId) && inScope(rule.scope, 'extensions', row.extensionId))
          .map((row) => row.extensionId),
      );
      for (const id of [...withdrawn].sort()) {
        const service = record.service ?? '';
        const instance = orNone(record.instanceId);
        findings.push({
          labels: { service, instance, extension: id },
          value: 1,
          summary: `Instance ${instance} of ${service} no longer advertises ${id}`,
          description: `${instance} (${service}) advertised ${id} before its latest advertisement, which no longer lists it.`,
          dashboardPath: dashboardPath('fleet', { service, instance: record.instanceId }),
        });
      }
    }
    return findings;
  }
  const services = new Map<string, InstanceRecord[]>();
  for (const record of relevant) services.set(record.service ?? '', [...(services.get(record.service ?? '') ?? []), record]);
  for (const [service, list] of services) {
    const liveRecords = list.filter((record) => live(record, now, staleAfterMs));
    if (liveRecords.length === 0) continue;
    const current = new Set(liveRecords.flatMap((record) => [...currentIds(record)]));
    const before = new Set(list.flatMap((record) => record.advertised.filter((row) => row.lastSeenMs >= since).map((row) => row.extensionId)));
    for (const id of [...before].sort()) {
      if (current.has(id) || !inScope(rule.scope, 'extensions', id)) continue;
      findings.push({
        labels: { service, extension: id },
        value: 1,
        summary: `${service} no longer advertises ${id}`,
        description: `An instance of ${service} advertised ${id} within the last ${rule.options.lookback}; none of its ${liveRecords.length} live instances advertises it now.`,
        dashboardPath: dashboardPath('fleet', { service }),
      });
    }
  }
  return findings;
}

export async function evaluateExtensionWithdrawn(rule: Rule<'extension_withdrawn'>, snapshot: Snapshot): Promise<Finding[]> {
  return extensionWithdrawn(rule, await snapshot.instances(), snapshot.now, snapshot.options.staleAfterMs);
}
