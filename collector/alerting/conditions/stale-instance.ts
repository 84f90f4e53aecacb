import type { InstanceRecord } from '../../model/records.js';
import { MS_PER_MINUTE } from '../../model/time.js';
import { parseDuration } from '../rules/duration.js';
import type { Rule } from '../rules/rule.js';
import { type Finding, dashboardPath, inScope, orNone } from './finding.js';
import type { Snapshot } from './snapshot.js';

/**
 * An instance silent for longer than `after`, but heard from within the lookback (older ones are gone, not stale),
 * that had reported for at least `minUptime` (a short-lived process, such as a stdio session, ends by design).
 */
function staleInstances(rule: Rule<'stale_instance'>, records: readonly InstanceRecord[], now: number): Finding[] {
  const after = parseDuration(rule.options.after);
  const since = now - parseDuration(rule.options.lookback);
  const minUptime = parseDuration(rule.options.minUptime);
  const findings: Finding[] = [];
  for (const record of records) {
    const silentMs = now - record.lastSeenMs;
    if (
      !(silentMs > after) ||
      record.lastSeenMs < since ||
      record.lastSeenMs - record.firstSeenMs < minUptime ||
      !inScope(rule.scope, 'services', record.service)
    )
      continue;
    const service = orNone(record.service);
    const instance = orNone(record.instanceId);
    const minutes = Math.floor(silentMs / MS_PER_MINUTE);
    findings.push({
      labels: { service, instance },
      value: minutes,
      summary: `Instance ${instance} of ${service} has not reported for ${minutes} minutes`,
      description: `${instance} (${service}${record.host === null ? '' : ` on ${record.host}`}) last reported at ${new Date(record.lastSeenMs).toISOString()}, more than ${rule.options.after} ago.`,
      dashboardPath: dashboardPath('fleet', { service: record.service, instance: record.instanceId }),
    });
  }
  return findings;
}

export async function evaluateStaleInstance(rule: Rule<'stale_instance'>, snapshot: Snapshot): Promise<Finding[]> {
  return staleInstances(rule, await snapshot.instances(), snapshot.now);
}
