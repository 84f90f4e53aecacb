import type { FleetInstance } from '../../analysis/fleet.js';
import { type DriftGroup, oddOneOut } from '../../analysis/odd-one-out.js';
import type { Rule } from '../rules/rule.js';
import { type Finding, dashboardPath, inScope, listed, orNone } from './finding.js';
import type { Snapshot } from './snapshot.js';

/** What an instance advertises in the rule's scope. */
function inScopeIds(instance: FleetInstance, rule: Rule<'advertisement_skew'>): FleetInstance['advertises'] {
  return instance.advertises.filter((entry) => inScope(rule.scope, 'extensions', entry.id));
}

/** `1 of 2 live instances of shop lacks com.example/search: shop-b`, per way one set of instances is off. */
function phrases(service: string, group: DriftGroup<FleetInstance>): string[] {
  const { drift } = group;
  const names = listed(group.members.map((instance) => orNone(instance.instanceId)).sort(), 3);
  const one = drift.members === 1;
  const who = `${drift.members} of ${drift.live} live instances of ${service}`;
  const said: string[] = [];
  if (drift.lacks.length > 0) said.push(`${who} ${one ? 'lacks' : 'lack'} ${listed(drift.lacks)}: ${names}`);
  if (drift.settingsDiffer.length > 0) said.push(`${who} ${one ? 'advertises' : 'advertise'} other settings for ${listed(drift.settingsDiffer)}: ${names}`);
  if (drift.role === 'minority' && drift.extra.length > 0)
    said.push(`${who} also ${one ? 'advertises' : 'advertise'} ${listed(drift.extra)}, which the others do not: ${names}`);
  return said;
}

/**
 * Live instances of one service advertise different extension sets, or different settings for one id: one
 * finding per service, naming the instances off the majority set and what they lack, add or set differently
 * (analysis/odd-one-out.ts); on a tie (no majority), the sides that lack ids or set them differently. Live: not
 * ended, heard from within the stale window, and advertising (analysis/fleet.ts).
 */
function advertisementSkew(rule: Rule<'advertisement_skew'>, fleet: readonly FleetInstance[]): Finding[] {
  const services = new Map<string, FleetInstance[]>();
  for (const instance of fleet) {
    if (!instance.live || instance.service === null || !inScope(rule.scope, 'services', instance.service)) continue;
    let list = services.get(instance.service);
    if (list === undefined) services.set(instance.service, (list = []));
    list.push(instance);
  }
  const findings: Finding[] = [];
  for (const [service, instances] of services) {
    if (instances.length < rule.options.minInstances) continue;
    const groups = oddOneOut(instances, (instance) => inScopeIds(instance, rule));
    if (groups.length === 0) continue;
    // The smallest sets first: the odd ones out lead the title.
    const said = groups
      .slice()
      .sort((a, b) => a.drift.members - b.drift.members)
      .flatMap((group) => phrases(service, group));
    const split = groups[0]?.drift.role === 'split';
    const context = split
      ? `No majority: the live instances are split ${groups.map((group) => group.drift.members).join(' vs ')}.`
      : `The other ${groups.find((group) => group.drift.role === 'majority')?.drift.members ?? 0} advertise the same set.`;
    findings.push({
      labels: { service },
      value: groups.length,
      summary: said[0] ?? `Live instances of ${service} advertise ${groups.length} different extension sets`,
      description: `${said.join('; ')}. ${context}`,
      dashboardPath: dashboardPath('fleet', { service }),
    });
  }
  return findings;
}

export async function evaluateAdvertisementSkew(rule: Rule<'advertisement_skew'>, snapshot: Snapshot): Promise<Finding[]> {
  return advertisementSkew(rule, await snapshot.fleet());
}
