import { endedAt, isSession } from '../../analysis/fleet.js';
import type { InstanceRecord } from '../../model/records.js';
import { MS_PER_MINUTE, spokenDuration } from '../../model/time.js';
import { parseDuration } from '../rules/duration.js';
import type { Rule } from '../rules/rule.js';
import { type Finding, dashboardPath, inScope, orNone } from './finding.js';
import type { Snapshot } from './snapshot.js';

/**
 * A long-lived instance silent for longer than `after`, but heard from within the lookback (older ones are gone, not
 * stale), that had reported for at least `minUptime`. Sessions (stdio: one client session per process) end by design,
 * and an instance whose last export said it ended did not go silent: neither is stale (analysis/fleet.ts).
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
      isSession(record) ||
      endedAt(record, now, after) !== null ||
      !inScope(rule.scope, 'services', record.service)
    )
      continue;
    const service = orNone(record.service);
    const instance = orNone(record.instanceId);
    findings.push({
      labels: { service, instance },
      // The value stays in minutes (what rules and receivers compare); the summary says it in the unit that reads.
      value: Math.floor(silentMs / MS_PER_MINUTE),
      summary: `Instance ${instance} of ${service} has not reported for ${spokenDuration(silentMs)}`,
      description: `${instance} (${service}${record.host === null ? '' : ` on ${record.host}`}) last reported at ${new Date(record.lastSeenMs).toISOString()}, more than ${rule.options.after} ago.`,
      dashboardPath: dashboardPath('fleet', { service: record.service, instance: record.instanceId }),
    });
  }
  return findings;
}

export async function evaluateStaleInstance(rule: Rule<'stale_instance'>, snapshot: Snapshot): Promise<Finding[]> {
  return staleInstances(rule, await snapshot.instances(), snapshot.now);
}
