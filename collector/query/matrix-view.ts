import { INVALID_EXTENSION_ID, OVERFLOW_VALUE } from '../../contract/index.js';
import type { ExtensionCounts, MatrixClient, MatrixResult } from '../store/store.js';

export type Grouping = 'client' | 'client_version';

/** Requests whose client sent no clientInfo name form their own row, labelled so. */
export const UNKNOWN_CLIENT = '(unknown client)';
export const UNKNOWN_VERSION = '(unknown version)';

export interface MatrixCell extends ExtensionCounts {
  id: string;
}

export interface MatrixRow {
  client: string;
  name: string | null;
  /** null when grouping by name only, or when the client sent no version. */
  version: string | null;
  requests: number;
  declaration: { unknown: number; none: number; declared: number };
  /** One per id of {@link MatrixView.extensions}, in the same order (zeros included). */
  extensions: MatrixCell[];
}

export interface MatrixView {
  extensions: string[];
  rows: MatrixRow[];
}

/** The agent's two pseudo-ids (invalid ids, overflow) sort after every real id. */
function compareIds(a: string, b: string): number {
  const special = (id: string): number => (id === INVALID_EXTENSION_ID || id === OVERFLOW_VALUE ? 1 : 0);
  return special(a) - special(b) || (a < b ? -1 : a > b ? 1 : 0);
}

export function clientLabel(name: string | null, version: string | null, group: Grouping): string {
  const base = name ?? UNKNOWN_CLIENT;
  return group === 'client' ? base : `${base}@${version ?? UNKNOWN_VERSION}`;
}

/** Store totals per (name, version) → rows per client name or name@version, dense over the ids seen. */
export function buildMatrixView(result: MatrixResult, group: Grouping): MatrixView {
  const ids = new Set<string>();
  const grouped = new Map<string, { row: Omit<MatrixRow, 'extensions'>; extensions: Map<string, ExtensionCounts> }>();
  for (const client of result.clients) {
    const version = group === 'client' ? null : client.version;
    const key = JSON.stringify([client.name, version]);
    let entry = grouped.get(key);
    if (entry === undefined) {
      entry = {
        row: {
          client: clientLabel(client.name, client.version, group),
          name: client.name,
          version,
          requests: 0,
          declaration: { unknown: 0, none: 0, declared: 0 },
        },
        extensions: new Map(),
      };
      grouped.set(key, entry);
    }
    merge(entry.row, entry.extensions, client);
    for (const id of client.extensions.keys()) ids.add(id);
  }
  const extensions = [...ids].sort(compareIds);
  const rows = [...grouped.values()].map(({ row, extensions: counts }) => ({
    ...row,
    extensions: extensions.map((id) => ({ id, ...(counts.get(id) ?? { clientDeclared: 0, serverAdvertised: 0, negotiated: 0 }) })),
  }));
  rows.sort((a, b) => b.requests - a.requests || (a.client < b.client ? -1 : a.client > b.client ? 1 : 0));
  return { extensions, rows };
}

function merge(row: Omit<MatrixRow, 'extensions'>, into: Map<string, ExtensionCounts>, client: MatrixClient): void {
  row.requests += client.requests;
  row.declaration.unknown += client.declaration.unknown;
  row.declaration.none += client.declaration.none;
  row.declaration.declared += client.declaration.declared;
  for (const [id, counts] of client.extensions) {
    const total = into.get(id);
    if (total === undefined) into.set(id, { ...counts });
    else {
      total.clientDeclared += counts.clientDeclared;
      total.serverAdvertised += counts.serverAdvertised;
      total.negotiated += counts.negotiated;
    }
  }
}
