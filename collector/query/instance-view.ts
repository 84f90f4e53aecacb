import type { InstanceIdentity } from '../processing/points.js';
import type { InstanceRecord } from '../store/store.js';
import { iso } from './params.js';

export interface AdvertisedServer {
  name: string | null;
  version: string | null;
  /** From `extscope.server.extensions` (null when the sender does not report it). */
  count: number | null;
  extensions: { id: string; fingerprint: string | null }[];
}

export interface InstanceView extends InstanceIdentity {
  firstSeen: string;
  lastSeen: string;
  stale: boolean;
  advertisedAt: string | null;
  /** What it advertises now: each id with its settings fingerprints (more than one = settings variants). */
  advertises: { id: string; fingerprints: string[] }[];
  /** The same per server identity (a process may run several server objects). */
  servers: AdvertisedServer[];
  /** Ids currently advertised with more than one settings fingerprint. */
  settingsVariants: number;
  /** Advertises something else (ids or settings) than another live instance of its service. */
  differs: boolean;
  history: {
    id: string;
    fingerprint: string | null;
    serverName: string | null;
    serverVersion: string | null;
    firstSeen: string;
    lastSeen: string;
    current: boolean;
  }[];
}

/** Compares instances within a service by the set of (id, fingerprint) each advertises now. */
function signature(record: InstanceRecord): string {
  const entries = new Set(record.advertised.filter((row) => row.current).map((row) => `${row.extensionId}=${row.fingerprint ?? ''}`));
  return [...entries].sort().join('\n');
}

export function buildInstancesView(records: readonly InstanceRecord[], now: number, staleAfterMs: number): InstanceView[] {
  const live = (record: InstanceRecord): boolean => now - record.lastSeenMs <= staleAfterMs && record.advertisedMs !== null;
  const signaturesByService = new Map<string | null, { record: InstanceRecord; signature: string }[]>();
  for (const record of records) {
    if (!live(record)) continue;
    let list = signaturesByService.get(record.service);
    if (list === undefined) signaturesByService.set(record.service, (list = []));
    list.push({ record, signature: signature(record) });
  }
  return records.map((record) => {
    const current = record.advertised.filter((row) => row.current);
    const fingerprints = new Map<string, Set<string>>();
    for (const row of current) {
      let set = fingerprints.get(row.extensionId);
      if (set === undefined) fingerprints.set(row.extensionId, (set = new Set()));
      if (row.fingerprint !== null) set.add(row.fingerprint);
    }
    const servers = new Map<string, AdvertisedServer>();
    const serverFor = (name: string | null, version: string | null): AdvertisedServer => {
      const key = JSON.stringify([name, version]);
      let server = servers.get(key);
      if (server === undefined) servers.set(key, (server = { name, version, count: null, extensions: [] }));
      return server;
    };
    for (const count of record.counts) if (count.current) serverFor(count.serverName, count.serverVersion).count = count.count;
    for (const row of current) serverFor(row.serverName, row.serverVersion).extensions.push({ id: row.extensionId, fingerprint: row.fingerprint });
    const own = signature(record);
    const others = (signaturesByService.get(record.service) ?? []).filter((entry) => entry.record !== record);
    return {
      service: record.service,
      instanceId: record.instanceId,
      serviceVersion: record.serviceVersion,
      host: record.host,
      serverName: record.serverName,
      serverVersion: record.serverVersion,
      firstSeen: iso(record.firstSeenMs),
      lastSeen: iso(record.lastSeenMs),
      stale: now - record.lastSeenMs > staleAfterMs,
      advertisedAt: record.advertisedMs === null ? null : iso(record.advertisedMs),
      advertises: [...fingerprints].map(([id, set]) => ({ id, fingerprints: [...set].sort() })),
      servers: [...servers.values()],
      settingsVariants: [...fingerprints.values()].filter((set) => set.size > 1).length,
      differs: record.advertisedMs !== null && others.some((entry) => entry.signature !== own),
      history: record.advertised.map((row) => ({
        id: row.extensionId,
        fingerprint: row.fingerprint,
        serverName: row.serverName,
        serverVersion: row.serverVersion,
        firstSeen: iso(row.firstSeenMs),
        lastSeen: iso(row.lastSeenMs),
        current: row.current,
      })),
    };
  });
}
