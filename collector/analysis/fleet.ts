import { TRANSPORT } from '../../contract/index.js';
import type { InstanceIdentity } from '../model/batches.js';
import type { InstanceRecord } from '../model/records.js';
import { MS_PER_MINUTE } from '../model/time.js';
import { type Drift, oddOneOut } from './odd-one-out.js';

interface AdvertisedServer {
  name: string | null;
  version: string | null;
  /** From `extscope.server.extensions` (null when the sender does not report it). */
  count: number | null;
  extensions: { id: string; fingerprint: string | null }[];
}

export interface FleetInstance extends InstanceIdentity {
  buildKey: string;
  firstSeenMs: number;
  lastSeenMs: number;
  /** When it ended (see {@link endedAt}); null while it runs. */
  endedMs: number | null;
  /** It served one client session over stdio: a session of its build (see {@link isSession}). */
  session: boolean;
  /** Its build's "ended sessions" row: how many ended sessions it holds (null for any other instance). */
  endedSessions: number | null;
  /** A long-lived instance not heard from for longer than the stale window. */
  stale: boolean;
  /** Running, heard from and advertising (see {@link isLive}). */
  live: boolean;
  advertisedMs: number | null;
  /** What it advertises now: each id with its settings fingerprints (more than one = settings variants). */
  advertises: { id: string; fingerprints: string[] }[];
  /** The same per server identity (a process may run several server objects). */
  servers: AdvertisedServer[];
  /** Ids currently advertised with more than one settings fingerprint. */
  settingsVariants: number;
  /** The odd one out: in a minority, or on a side of a split that lacks ids or sets them differently (see {@link drift}). */
  differs: boolean;
  /** Where it stands against the other live instances of its service; null when they all agree, or it is not live. */
  drift: Drift | null;
  history: {
    id: string;
    fingerprint: string | null;
    serverName: string | null;
    serverVersion: string | null;
    firstSeenMs: number;
    lastSeenMs: number;
    current: boolean;
  }[];
}

type Lifetime = Pick<InstanceRecord, 'lastSeenMs' | 'endedMs' | 'transport'>;

/** A process that served one client session over stdio: a session of its build, not a long-lived instance. */
export function isSession(record: Pick<InstanceRecord, 'transport'>): boolean {
  return record.transport === TRANSPORT.stdio;
}

/**
 * A session silent this long ended (killed outright, it sent no last export): two of the agent's export intervals
 * (`OTEL_METRIC_EXPORT_INTERVAL`, 60 s), since a running session exports every interval, traffic or not (its
 * advertisement gauges), and one export may arrive late. At most the stale window, when that is shorter.
 */
export const SESSION_SILENCE_MS = 2 * MS_PER_MINUTE;

/**
 * When the instance ended, or null while it runs: its last export said so (`extscope.process.ended`), or, for a
 * session, its silence beyond {@link SESSION_SILENCE_MS} (it is over, not stale; it ended when last heard from). A
 * long-lived instance that falls silent is stale, not ended: someone should look.
 */
export function endedAt(record: Lifetime, now: number, staleAfterMs: number): number | null {
  // The stores clear it at any later export: a process restarted under the same id runs again.
  if (record.endedMs !== null) return record.endedMs;
  return isSession(record) && now - record.lastSeenMs > Math.min(SESSION_SILENCE_MS, staleAfterMs) ? record.lastSeenMs : null;
}

/** A long-lived instance not heard from within the stale window (sessions and ended instances are never stale). */
function isStale(record: Lifetime, now: number, staleAfterMs: number): boolean {
  return !isSession(record) && now - record.lastSeenMs > staleAfterMs && endedAt(record, now, staleAfterMs) === null;
}

/** Running and heard from: not ended, not stale, and advertising at all. What drift and skew are judged over. */
export function isLive(record: Lifetime & Pick<InstanceRecord, 'advertisedMs'>, now: number, staleAfterMs: number): boolean {
  return record.advertisedMs !== null && endedAt(record, now, staleAfterMs) === null && !isStale(record, now, staleAfterMs);
}

/** What a record advertises now: each id with its settings fingerprints (sorted). */
function currentIds(record: InstanceRecord): { id: string; fingerprints: string[] }[] {
  const fingerprints = new Map<string, Set<string>>();
  for (const row of record.advertised) {
    if (!row.current) continue;
    let set = fingerprints.get(row.extensionId);
    if (set === undefined) fingerprints.set(row.extensionId, (set = new Set()));
    if (row.fingerprint !== null) set.add(row.fingerprint);
  }
  return [...fingerprints].map(([id, set]) => ({ id, fingerprints: [...set].sort() }));
}

/**
 * The fleet: per instance what it advertises now, per server identity, its settings variants, staleness, and
 * drift: where it stands against the other live instances of its service (analysis/odd-one-out.ts), `differs`
 * when it is the odd one out. Live: see {@link isLive}.
 */
export function buildFleet(records: readonly InstanceRecord[], now: number, staleAfterMs: number): FleetInstance[] {
  const live = (record: InstanceRecord): boolean => isLive(record, now, staleAfterMs);
  const advertises = new Map<InstanceRecord, { id: string; fingerprints: string[] }[]>();
  for (const record of records) advertises.set(record, currentIds(record));
  const liveByService = new Map<string | null, InstanceRecord[]>();
  for (const record of records) {
    if (!live(record)) continue;
    let list = liveByService.get(record.service);
    if (list === undefined) liveByService.set(record.service, (list = []));
    list.push(record);
  }
  const drifts = new Map<InstanceRecord, Drift>();
  for (const list of liveByService.values())
    for (const group of oddOneOut(list, (record) => advertises.get(record) ?? [])) for (const member of group.members) drifts.set(member, group.drift);
  return records.map((record) => {
    const current = record.advertised.filter((row) => row.current);
    const ids = advertises.get(record) ?? [];
    const drift = drifts.get(record) ?? null;
    const servers = new Map<string, AdvertisedServer>();
    const serverFor = (name: string | null, version: string | null): AdvertisedServer => {
      const key = JSON.stringify([name, version]);
      let server = servers.get(key);
      if (server === undefined) servers.set(key, (server = { name, version, count: null, extensions: [] }));
      return server;
    };
    for (const count of record.counts) if (count.current) serverFor(count.serverName, count.serverVersion).count = count.count;
    for (const row of current) serverFor(row.serverName, row.serverVersion).extensions.push({ id: row.extensionId, fingerprint: row.fingerprint });
    // Fields named one by one (a resource attribute the contract adds is a compile error here until passed on);
    // spreading the record's identity into this literal measured some 30 times slower.
    return {
      service: record.service,
      instanceId: record.instanceId,
      serviceVersion: record.serviceVersion,
      host: record.host,
      serverName: record.serverName,
      serverVersion: record.serverVersion,
      transport: record.transport,
      deploymentEnvironment: record.deploymentEnvironment,
      k8sNamespace: record.k8sNamespace,
      k8sDeployment: record.k8sDeployment,
      buildKey: record.buildKey,
      firstSeenMs: record.firstSeenMs,
      lastSeenMs: record.lastSeenMs,
      endedMs: endedAt(record, now, staleAfterMs),
      session: isSession(record),
      endedSessions: record.endedSessions,
      advertisedMs: record.advertisedMs,
      stale: isStale(record, now, staleAfterMs),
      live: live(record),
      advertises: ids,
      servers: [...servers.values()],
      settingsVariants: ids.filter((entry) => entry.fingerprints.length > 1).length,
      differs: drift !== null && (drift.role === 'minority' || drift.lacks.length > 0 || drift.settingsDiffer.length > 0),
      drift,
      history: record.advertised.map((row) => ({
        id: row.extensionId,
        fingerprint: row.fingerprint,
        serverName: row.serverName,
        serverVersion: row.serverVersion,
        firstSeenMs: row.firstSeenMs,
        lastSeenMs: row.lastSeenMs,
        current: row.current,
      })),
    };
  });
}

/** What a fleet listing shows: what runs, and what ended within the last `endedTtlMs` (0: nothing that ended). */
export function listed<T extends Pick<FleetInstance, 'endedMs'>>(fleet: readonly T[], now: number, endedTtlMs: number): T[] {
  return fleet.filter((instance) => instance.endedMs === null || (endedTtlMs > 0 && instance.endedMs >= now - endedTtlMs));
}
