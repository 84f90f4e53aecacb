import { isPseudoExtensionId } from '../../contract/index.js';
import { SeriesKind } from '../model/batches.js';
import type { CellTotal } from '../model/records.js';

export type Grouping = 'client' | 'client_version';

/** Requests whose client sent no clientInfo name form their own row, labelled so. */
const UNKNOWN_CLIENT = '(unknown client)';
const UNKNOWN_VERSION = '(unknown version)';

/** Per extension id: requests where the client declared it, the server advertised it, and both. */
export interface ExtensionCounts {
  clientDeclared: number;
  serverAdvertised: number;
  negotiated: number;
}

export interface DeclarationCounts {
  unknown: number;
  none: number;
  declared: number;
}

export interface MatrixCell extends ExtensionCounts {
  id: string;
}

export interface MatrixRow {
  client: string;
  name: string | null;
  /** null when grouping by name only, or when the client sent no version. */
  version: string | null;
  requests: number;
  declaration: DeclarationCounts;
  /** One per id of {@link MatrixView.extensions}, in the same order (zeros included). */
  extensions: MatrixCell[];
}

/** Clients × extensions: rows by client (name, or name@version), dense over every id seen. */
export interface MatrixView {
  extensions: string[];
  rows: MatrixRow[];
}

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Ids in order, the contract's pseudo-ids (invalid ids, overflow) after every real one. */
function compareExtensionIds(a: string, b: string): number {
  return Number(isPseudoExtensionId(a)) - Number(isPseudoExtensionId(b)) || byText(a, b);
}

export function clientLabel(name: string | null, version: string | null, group: Grouping): string {
  const base = name ?? UNKNOWN_CLIENT;
  return group === 'client' ? base : `${base}@${version ?? UNKNOWN_VERSION}`;
}

const zero = (): ExtensionCounts => ({ clientDeclared: 0, serverAdvertised: 0, negotiated: 0 });

/**
 * Cell totals → the matrix. Request cells give a row its requests and declaration states; extension cells
 * give its per-id counts (declared by the client, advertised by the server, negotiated: both). Rows are
 * ordered by requests, then label.
 */
export function buildMatrix(cells: readonly CellTotal[], group: Grouping): MatrixView {
  const ids = new Set<string>();
  const rows = new Map<string, { row: Omit<MatrixRow, 'extensions'>; counts: Map<string, ExtensionCounts> }>();
  for (const cell of cells) {
    const version = group === 'client' ? null : cell.clientVersion;
    const key = JSON.stringify([cell.clientName, version]);
    let entry = rows.get(key);
    if (entry === undefined) {
      entry = {
        row: { client: clientLabel(cell.clientName, cell.clientVersion, group), name: cell.clientName, version, requests: 0, declaration: { unknown: 0, none: 0, declared: 0 } },
        counts: new Map(),
      };
      rows.set(key, entry);
    }
    if (cell.kind === SeriesKind.Requests) {
      entry.row.requests += cell.count;
      const state = cell.clientDeclaration;
      if (state === 'unknown' || state === 'none' || state === 'declared') entry.row.declaration[state] += cell.count;
      continue;
    }
    const id = cell.extensionId ?? '';
    ids.add(id);
    let counts = entry.counts.get(id);
    if (counts === undefined) entry.counts.set(id, (counts = zero()));
    if (cell.clientDeclared === true) counts.clientDeclared += cell.count;
    if (cell.serverDeclared === true) counts.serverAdvertised += cell.count;
    if (cell.negotiated === true) counts.negotiated += cell.count;
  }
  const extensions = [...ids].sort(compareExtensionIds);
  const view = [...rows.values()].map(({ row, counts }) => ({
    client: row.client,
    name: row.name,
    version: row.version,
    requests: row.requests,
    declaration: row.declaration,
    extensions: extensions.map((id) => {
      const cell = counts.get(id);
      return { id, clientDeclared: cell?.clientDeclared ?? 0, serverAdvertised: cell?.serverAdvertised ?? 0, negotiated: cell?.negotiated ?? 0 };
    }),
  }));
  view.sort((a, b) => b.requests - a.requests || byText(a.client, b.client));
  return { extensions, rows: view };
}

/** Every client name and version seen, with its requests, by label. */
export function clientTotals(cells: readonly CellTotal[]): { client: string; name: string | null; version: string | null; requests: number }[] {
  return buildMatrix(cells, 'client_version')
    .rows.map(({ client, name, version, requests }) => ({ client, name, version, requests }))
    .sort((a, b) => byText(a.client, b.client));
}

/** Per id, the counts over every client. */
export function extensionTotals(view: MatrixView): MatrixCell[] {
  return view.extensions.map((id, index) => {
    const total = { id, ...zero() };
    for (const row of view.rows) {
      const cell = row.extensions[index];
      if (cell === undefined) continue;
      total.clientDeclared += cell.clientDeclared;
      total.serverAdvertised += cell.serverAdvertised;
      total.negotiated += cell.negotiated;
    }
    return total;
  });
}
