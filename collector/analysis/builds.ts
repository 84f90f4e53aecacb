import { type BuildIdentity, buildLabel } from '../model/build.js';
import type { FleetInstance } from './fleet.js';

/** One build (model/build.ts): what was deployed where, with its sessions counted and its long-lived instances named. */
export interface FleetBuild extends BuildIdentity {
  key: string;
  label: string;
  /** Sessions (stdio processes, one client session each) running now. */
  liveSessions: number;
  /** Sessions heard from within the listing window, ended ones included. */
  sessions: number;
  /** Long-lived instances that have not ended, by id (live or stale). */
  instances: { instanceId: string | null; live: boolean; stale: boolean }[];
}

/**
 * The builds of a fleet (every instance heard from within the listing window, ended ones included, so that
 * `sessions` is a total), by service, then label.
 */
export function fleetBuilds(fleet: readonly FleetInstance[]): FleetBuild[] {
  const builds = new Map<string, FleetBuild>();
  for (const instance of fleet) {
    let build = builds.get(instance.buildKey);
    if (build === undefined) {
      const identity: BuildIdentity = {
        service: instance.service,
        serverName: instance.serverName,
        serverVersion: instance.serverVersion,
        host: instance.host,
        deploymentEnvironment: instance.deploymentEnvironment,
        k8sNamespace: instance.k8sNamespace,
        k8sDeployment: instance.k8sDeployment,
      };
      build = { key: instance.buildKey, label: buildLabel(identity), ...identity, liveSessions: 0, sessions: 0, instances: [] };
      builds.set(instance.buildKey, build);
    }
    if (instance.session) {
      // A build's "ended sessions" row holds the sessions folded into it (store/common/session-fold.ts).
      build.sessions += instance.endedSessions ?? 1;
      if (instance.endedMs === null) build.liveSessions += 1;
    } else if (instance.endedMs === null) build.instances.push({ instanceId: instance.instanceId, live: instance.live, stale: instance.stale });
  }
  const order = (build: FleetBuild): string => `${build.service ?? ''}\u0000${build.label}`;
  return [...builds.values()].sort((a, b) => (order(a) < order(b) ? -1 : order(a) > order(b) ? 1 : 0));
}
