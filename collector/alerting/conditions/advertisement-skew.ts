import type { FleetInstance } from '../../analysis/fleet.js';
import type { Rule } from '../rules/rule.js';
import { type Finding, dashboardPath, inScope, listed, orNone } from './finding.js';
import type { Snapshot } from './snapshot.js';

/** What an instance advertises, as comparable text: each id in scope with its settings fingerprints. */
function signature(instance: FleetInstance, rule: Rule<'advertisement_skew'>): string {
  return instance.advertises
    .filter((entry) => inScope(rule.scope, 'extensions', entry.id))
    .map((entry) => `${entry.id}=${entry.fingerprints.join(',')}`)
    .sort()
    .join('\n');
}

/**
 * Live instances of one service advertise different extension sets, or different settings for one id: one
 * finding per service, naming the ids that differ. Live: heard from within the stale window, and advertising.
 */
function advertisementSkew(rule: Rule<'advertisement_skew'>, fleet: readonly FleetInstance[]): Finding[] {
  const services = new Map<string, FleetInstance[]>();
  for (const instance of fleet) {
    if (instance.stale || instance.advertisedMs === null || instance.service === null || !inScope(rule.scope, 'services', instance.service)) continue;
    let list = services.get(instance.service);
    if (list === undefined) services.set(instance.service, (list = []));
    list.push(instance);
  }
  const findings: Finding[] = [];
  for (const [service, instances] of services) {
    if (instances.length < rule.options.minInstances) continue;
    const variants = new Map<string, FleetInstance[]>();
    for (const instance of instances) {
      const key = signature(instance, rule);
      variants.set(key, [...(variants.get(key) ?? []), instance]);
    }
    if (variants.size < 2) continue;
    // An id differs when some instance lacks it or advertises other settings for it than another instance.
    const byId = new Map<string, Set<string>>();
    for (const instance of instances) {
      for (const entry of instance.advertises) {
        if (!inScope(rule.scope, 'extensions', entry.id)) continue;
        byId.set(entry.id, (byId.get(entry.id) ?? new Set()).add(entry.fingerprints.join(',')));
      }
    }
    const differing = [...byId]
      .filter(([id, fingerprints]) => fingerprints.size > 1 || instances.some((instance) => !instance.advertises.some((entry) => entry.id === id)))
      .map(([id]) => id)
      .sort();
    const groups = [...variants.values()].map((group) => listed(group.map((instance) => orNone(instance.instanceId)).sort(), 3));
    findings.push({
      labels: { service },
      value: variants.size,
      summary: `Instances of ${service} advertise ${variants.size} different extension sets`,
      description: `${instances.length} live instances of ${service} do not advertise the same extensions (${listed(differing)} differ). Instance groups: ${groups.join(' | ')}.`,
      dashboardPath: dashboardPath('fleet', { service }),
    });
  }
  return findings;
}

export async function evaluateAdvertisementSkew(rule: Rule<'advertisement_skew'>, snapshot: Snapshot): Promise<Finding[]> {
  return advertisementSkew(rule, await snapshot.fleet());
}
