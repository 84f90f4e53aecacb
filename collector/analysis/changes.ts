import { buildLabel } from '../model/build.js';
import type { InstanceRecord } from '../model/records.js';
import type { MatrixRow, MatrixView } from './matrix.js';
import { compareVersions, declarationChange } from './versions.js';

/**
 * What changed between two periods, decided here for the API and the page: the changes users care about first —
 * a client version that stopped or started declaring an id, a share that moved, an instance that stopped or started
 * advertising one — ranked by the requests they affect.
 */

type ChangeKind = 'stopped_declaring' | 'started_declaring' | 'share_moved' | 'stopped_advertising' | 'started_advertising';

export interface Change {
  kind: ChangeKind;
  /** The row (name@version) for client changes; the instance for advertising changes. */
  subject: string;
  id: string;
  /** Negotiated shares before and after (client changes), null where there were no requests. */
  before: number | null;
  after: number | null;
  /** Requests of the later period the change touches: the version's requests, or the share moved times the requests. */
  requests: number;
  /** The version before, for a client version that stopped or started declaring. */
  previous?: string | undefined;
  service?: string | null | undefined;
  /** For advertising changes: the build of the instance (model/build.ts), which says what deploy brought the change. */
  build?: string | undefined;
  atMs?: number | undefined;
}

const known = (row: MatrixRow): number => Math.max(0, row.requests - row.serverUnknown);

/** What What changed needs of each side by default before it says a client version stopped or started declaring an id. */
export const DEFAULT_MIN_VERSION_REQUESTS = 5;

/**
 * Two matrices by name@version, of the earlier and the later period. A client name's newest version in the later
 * period (in the order of versions.ts) that declares an id its previous version (in either period) declared on none
 * of its requests — or the reverse — is a change of that version, when both sides hold `minRequests` of evidence
 * (versions.ts); every row × id whose negotiated share moved by more than `thresholdPoints` between the periods is
 * another.
 */
export function compareMatrices(before: MatrixView, after: MatrixView, thresholdPoints: number, minRequests = DEFAULT_MIN_VERSION_REQUESTS): Change[] {
  const changes: Change[] = [];
  const declared = (row: MatrixRow, id: string): number => row.extensions.find((cell) => cell.id === id)?.clientDeclared ?? 0;
  const ids = [...new Set([...before.extensions, ...after.extensions])];
  const versions = new Map<string, Map<string, { before?: MatrixRow; after?: MatrixRow }>>();
  for (const [period, view] of [
    ['before', before],
    ['after', after],
  ] as const) {
    for (const row of view.rows) {
      if (row.name === null || row.version === null) continue;
      let byVersion = versions.get(row.name);
      if (byVersion === undefined) versions.set(row.name, (byVersion = new Map()));
      const entry = byVersion.get(row.version) ?? {};
      entry[period] = row;
      byVersion.set(row.version, entry);
    }
  }
  for (const [, byVersion] of versions) {
    const ordered = [...byVersion.keys()].sort(compareVersions);
    const newest = ordered[ordered.length - 1];
    const previous = ordered[ordered.length - 2];
    if (newest === undefined || previous === undefined) continue;
    const now = byVersion.get(newest)?.after;
    const then = byVersion.get(previous);
    if (now === undefined || then === undefined) continue;
    const thenRequests = (then.before?.requests ?? 0) + (then.after?.requests ?? 0);
    for (const id of ids) {
      const was = (then.before === undefined ? 0 : declared(then.before, id)) + (then.after === undefined ? 0 : declared(then.after, id));
      const change = declarationChange({ requests: thenRequests, declared: was }, { requests: now.requests, declared: declared(now, id) }, minRequests);
      if (change === undefined) continue;
      const share = (row: MatrixRow | undefined): number | null => row?.extensions.find((cell) => cell.id === id)?.negotiatedShare ?? null;
      changes.push({
        kind: change === 'stopped' ? 'stopped_declaring' : 'started_declaring',
        subject: now.client,
        id,
        previous: then.after?.client ?? then.before?.client,
        before: share(then.after ?? then.before),
        after: share(now),
        requests: now.requests,
      });
    }
  }
  const earlier = new Map(before.rows.map((row) => [row.client, row]));
  for (const row of after.rows) {
    const old = earlier.get(row.client);
    if (old === undefined || known(old) === 0 || known(row) === 0) continue;
    for (const cell of row.extensions) {
      const was = old.extensions.find((entry) => entry.id === cell.id)?.negotiatedShare ?? 0;
      const is = cell.negotiatedShare ?? 0;
      if (Math.abs(is - was) * 100 <= thresholdPoints) continue;
      changes.push({ kind: 'share_moved', subject: row.client, id: cell.id, before: was, after: is, requests: Math.round(Math.abs(is - was) * known(row)) });
    }
  }
  return changes.sort((a, b) => b.requests - a.requests || (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0) || (a.id < b.id ? -1 : 1));
}

/** Instances that started or stopped advertising an id within [fromMs, toMs), from their advertising history. */
export function advertisingChanges(records: readonly InstanceRecord[], fromMs: number, toMs: number): Change[] {
  const changes: Change[] = [];
  for (const record of records) {
    const perId = new Map<string, { first: number; last: number; current: boolean }>();
    for (const row of record.advertised) {
      const seen = perId.get(row.extensionId) ?? { first: Infinity, last: -Infinity, current: false };
      seen.first = Math.min(seen.first, row.firstSeenMs);
      seen.last = Math.max(seen.last, row.lastSeenMs);
      seen.current ||= row.current;
      perId.set(row.extensionId, seen);
    }
    const subject = record.instanceId ?? '(no instance id)';
    for (const [id, seen] of perId) {
      const base = { subject, id, before: null, after: null, requests: 0, service: record.service, build: buildLabel(record) };
      if (seen.first >= fromMs && seen.first < toMs) changes.push({ ...base, kind: 'started_advertising', atMs: seen.first });
      if (!seen.current && seen.last >= fromMs && seen.last < toMs) changes.push({ ...base, kind: 'stopped_advertising', atMs: seen.last });
    }
  }
  return changes.sort((a, b) => (b.atMs ?? 0) - (a.atMs ?? 0));
}
