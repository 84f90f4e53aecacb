import { OVERFLOW_VALUE, isPseudoExtensionId } from '../../contract/index.js';
import { SeriesKind } from '../model/batches.js';
import type { CellTotal } from '../model/records.js';
import { buildLabelOfKey } from '../model/build.js';
import { type CellFigures, cellFigures } from './cell.js';

/** Rows by client name or name@version (any source), or by service, build or service + instance (instance cells only). */
export type ClientGrouping = 'client' | 'client_version';
export type InstanceGrouping = 'service' | 'build' | 'instance';
export type Grouping = ClientGrouping | InstanceGrouping;

export const isInstanceGrouping = (group: Grouping): group is InstanceGrouping => group === 'service' || group === 'build' || group === 'instance';

/** Requests whose client sent no clientInfo name form their own row, labelled so. */
const UNKNOWN_CLIENT = '(unknown client)';
const UNKNOWN_VERSION = '(unknown version)';
const UNKNOWN_SERVICE = '(unknown service)';
const UNKNOWN_INSTANCE = '(unknown instance)';

/** Per extension id: requests where the client declared it, the server advertised it, and both. */
export interface ExtensionCounts {
  clientDeclared: number;
  serverAdvertised: number;
  negotiated: number;
}

interface DeclarationCounts {
  unknown: number;
  none: number;
  declared: number;
}

/** A cell's counts as summed: what the figures (analysis/cell.ts) are computed from. */
interface CellCounts extends ExtensionCounts {
  /** Of `clientDeclared`, the requests answered before any server instance existed (left out of shares). */
  serverUnknown: number;
  /** Requests answered `-32021` (missing required client capability) naming this id. */
  required: number;
}

export interface MatrixCell extends CellCounts, CellFigures {
  id: string;
}

/** `-32021` answers per client name and version and the id they named (the store's required trend, summed). */
export interface RequiredCount {
  id: string | null;
  name: string | null;
  version: string | null;
  count: number;
  /** With instance cells: the instance that answered, and its build. */
  service?: string | null;
  instanceId?: string | null;
  build?: string | null;
}

/** What a row is keyed by: a cell total's client, and (instance cells) its service and instance. */
interface RowSource {
  clientName: string | null;
  clientVersion: string | null;
  service?: string | null | undefined;
  instanceId?: string | null | undefined;
  build?: string | null | undefined;
}

export interface MatrixRow {
  /** The row's label: the client (name, or name@version), the service, the build (`name@version on host`), or `service / instance`. */
  client: string;
  /** null when grouping by service, build or instance. */
  name: string | null;
  /** null when grouping by name only, or when the client sent no version. */
  version: string | null;
  /** Grouping by service, build or instance only: the service, the build's key (by build), the instance id (by instance). */
  service?: string | null;
  build?: string | null;
  instance?: string | null;
  requests: number;
  /**
   * Of `requests`, those answered before any server instance existed (the server's declaration unknown): counted
   * as requests, left out of every share (analysis/share.ts).
   */
  serverUnknown: number;
  declaration: DeclarationCounts;
  /** Only on the row `_OTHER` past the row limit: how many rows it sums (a client may itself be named `_OTHER`). */
  summedRows?: number;
  /** One per id of {@link MatrixView.extensions}, in the same order (zeros included). */
  extensions: MatrixCell[];
}

/** Clients × extensions: rows by client (name, or name@version), dense over the ids shown. */
export interface MatrixView {
  extensions: string[];
  rows: MatrixRow[];
  /** Rows and ids there were before the limits: past them, the rest is summed in a row / an id `_OTHER`. */
  rowsTotal: number;
  extensionsTotal: number;
}

/** The most rows and ids a view holds (the busiest first); the rest is summed under `_OTHER`. */
export interface MatrixLimits {
  rows: number;
  extensions: number;
}

const UNLIMITED: MatrixLimits = { rows: Number.POSITIVE_INFINITY, extensions: Number.POSITIVE_INFINITY };

const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Ids in order, the contract's pseudo-ids (invalid ids, overflow) after every real one. */
function compareExtensionIds(a: string, b: string): number {
  return Number(isPseudoExtensionId(a)) - Number(isPseudoExtensionId(b)) || byText(a, b);
}

export function clientLabel(name: string | null, version: string | null, group: ClientGrouping): string {
  const base = name ?? UNKNOWN_CLIENT;
  return group === 'client' ? base : `${base}@${version ?? UNKNOWN_VERSION}`;
}

/** An instance's label: `service / instance id`, either labelled when absent. */
export function instanceLabel(service: string | null, instanceId: string | null): string {
  return `${service ?? UNKNOWN_SERVICE} / ${instanceId ?? UNKNOWN_INSTANCE}`;
}

type RowIdentity = Pick<MatrixRow, 'client' | 'name' | 'version' | 'service' | 'build' | 'instance'>;

/**
 * The row a cell total (or a `-32021` count) belongs to, as two keys (the second null when one names it): looked up in
 * a map of maps, no key text made per cell (ten thousand per read by instance). Null and every text are distinct keys.
 */
function rowKeys(source: RowSource, group: Grouping): [string | null, string | null] {
  const service = source.service ?? null;
  if (group === 'service') return [service, null];
  if (group === 'build') return [source.build ?? null, null];
  if (group === 'instance') return [service, source.instanceId ?? null];
  return [source.clientName, group === 'client' ? null : source.clientVersion];
}

/** Whether two cell totals (or `-32021` counts) belong to one row: the fields {@link rowKeys} are made of, compared. */
function sameRow(a: RowSource, b: RowSource, group: Grouping): boolean {
  if (group === 'service') return (a.service ?? null) === (b.service ?? null);
  if (group === 'build') return (a.build ?? null) === (b.build ?? null);
  if (group === 'instance') return (a.service ?? null) === (b.service ?? null) && (a.instanceId ?? null) === (b.instanceId ?? null);
  return a.clientName === b.clientName && (group === 'client' || a.clientVersion === b.clientVersion);
}

/**
 * Rows by their key. The row of the last cell is tried first: a store's cells come grouped by row (instance by
 * instance), so most cells need no key made (thousands per read).
 */
class RowIndex<E> {
  /** Every row, in the order first met. */
  readonly rows: E[] = [];
  private readonly byKeys = new Map<string | null, Map<string | null, E>>();
  // Two fields, not one object: no allocation per row met.
  private lastSource: RowSource | undefined;
  private lastRow: E | undefined;

  constructor(private readonly group: Grouping) {}

  /** The row of `source`, made by `make` when there is none yet. */
  of(source: RowSource, make: () => E): E {
    if (this.lastSource !== undefined && sameRow(this.lastSource, source, this.group)) return this.lastRow as E;
    const [first, second] = rowKeys(source, this.group);
    let rows = this.byKeys.get(first);
    if (rows === undefined) this.byKeys.set(first, (rows = new Map()));
    let row = rows.get(second);
    if (row === undefined) {
      rows.set(second, (row = make()));
      this.rows.push(row);
    }
    this.lastSource = source;
    this.lastRow = row;
    return row;
  }

  /** The row of `source` if there is one. */
  find(source: RowSource): E | undefined {
    if (this.lastSource !== undefined && sameRow(this.lastSource, source, this.group)) return this.lastRow;
    const [first, second] = rowKeys(source, this.group);
    return this.byKeys.get(first)?.get(second);
  }
}

/** The identifying fields of the row {@link rowKeys} name: made once per row, not once per cell (thousands per read). */
function rowIdentity(source: RowSource, group: Grouping): RowIdentity {
  const service = source.service ?? null;
  if (group === 'service') return { client: service ?? UNKNOWN_SERVICE, name: null, version: null, service };
  if (group === 'build') {
    const build = source.build ?? null;
    return { client: buildLabelOfKey(build), name: null, version: null, service, build };
  }
  if (group === 'instance') {
    const instance = source.instanceId ?? null;
    return { client: instanceLabel(service, instance), name: null, version: null, service, instance };
  }
  const version = group === 'client' ? null : source.clientVersion;
  return { client: clientLabel(source.clientName, source.clientVersion, group), name: source.clientName, version };
}

/** The row `_OTHER` past the row limit, with the fields its grouping's rows have. */
function otherIdentity(group: Grouping): RowIdentity {
  if (group === 'service') return { client: OVERFLOW_VALUE, name: null, version: null, service: OVERFLOW_VALUE };
  if (group === 'instance') return { client: OVERFLOW_VALUE, name: null, version: null, service: OVERFLOW_VALUE, instance: OVERFLOW_VALUE };
  if (group === 'build') return { client: OVERFLOW_VALUE, name: null, version: null, service: OVERFLOW_VALUE, build: OVERFLOW_VALUE };
  return { client: OVERFLOW_VALUE, name: OVERFLOW_VALUE, version: null };
}

const zero = (): CellCounts => ({ clientDeclared: 0, serverAdvertised: 0, negotiated: 0, serverUnknown: 0, required: 0 });

/** `from` added to `into` (`sign` 1) or taken away from it (−1). */
const add = (into: CellCounts, from: CellCounts, sign: 1 | -1 = 1): void => {
  into.clientDeclared += sign * from.clientDeclared;
  into.serverAdvertised += sign * from.serverAdvertised;
  into.negotiated += sign * from.negotiated;
  into.serverUnknown += sign * from.serverUnknown;
  into.required += sign * from.required;
};

/** The cell as served: its counts and what they mean, computed once (analysis/cell.ts). */
export function matrixCell(id: string, counts: CellCounts, row: { requests: number; serverUnknown: number }): MatrixCell {
  return { id, ...counts, ...cellFigures(counts, row) };
}

interface Entry {
  row: Omit<MatrixRow, 'extensions'>;
  counts: Map<string, CellCounts>;
}

const emptyRow = (identity: RowIdentity): Entry['row'] => ({ ...identity, requests: 0, serverUnknown: 0, declaration: { unknown: 0, none: 0, declared: 0 } });

/** `from`'s counts added to `into` (`sign` 1) or taken away from them (−1). */
function addEntry(into: Entry, from: Entry, sign: 1 | -1 = 1): void {
  into.row.requests += sign * from.row.requests;
  into.row.serverUnknown += sign * from.row.serverUnknown;
  into.row.declaration.unknown += sign * from.row.declaration.unknown;
  into.row.declaration.none += sign * from.row.declaration.none;
  into.row.declaration.declared += sign * from.row.declaration.declared;
  for (const [id, count] of from.counts) {
    let counts = into.counts.get(id);
    if (counts === undefined) into.counts.set(id, (counts = zero()));
    add(counts, count, sign);
  }
}

/** Where a cell total's counts go: its row's entry (made when first met), and the row if there is one already. */
interface RowsOf {
  entryOf(cell: CellTotal & RowSource): Entry;
  existing(source: RowSource): Entry | undefined;
}

/**
 * Cell totals into rows (see {@link buildMatrix}), with each id's total over them in `idTotals`. `required` counts of a
 * row not met among the cells are left out (every such answer is also a request).
 */
function fill(
  into: RowsOf,
  idTotals: Map<string, number>,
  cells: readonly (CellTotal & RowSource)[],
  serverUnknown: readonly (CellTotal & RowSource)[],
  required: readonly RequiredCount[],
): void {
  for (const cell of cells) {
    const entry = into.entryOf(cell);
    if (cell.kind === SeriesKind.Requests) {
      entry.row.requests += cell.count;
      const state = cell.clientDeclaration;
      if (state === 'unknown' || state === 'none' || state === 'declared') entry.row.declaration[state] += cell.count;
      continue;
    }
    const id = cell.extensionId ?? '';
    idTotals.set(id, (idTotals.get(id) ?? 0) + cell.count);
    let counts = entry.counts.get(id);
    if (counts === undefined) entry.counts.set(id, (counts = zero()));
    if (cell.clientDeclared === true) counts.clientDeclared += cell.count;
    if (cell.serverDeclared === true) counts.serverAdvertised += cell.count;
    if (cell.negotiated === true) counts.negotiated += cell.count;
  }
  // A part of what is already counted above: it adds no row, id or request, only says which were answered blind.
  for (const cell of serverUnknown) {
    const entry = into.entryOf(cell);
    if (cell.kind === SeriesKind.Requests) {
      entry.row.serverUnknown += cell.count;
      continue;
    }
    const id = cell.extensionId ?? '';
    let counts = entry.counts.get(id);
    if (counts === undefined) entry.counts.set(id, (counts = zero()));
    if (cell.clientDeclared === true) counts.serverUnknown += cell.count;
  }
  for (const answer of required) {
    if (answer.id === null) continue;
    const entry = into.existing({
      clientName: answer.name,
      clientVersion: answer.version,
      service: answer.service,
      instanceId: answer.instanceId,
      build: answer.build,
    });
    if (entry === undefined) continue;
    let counts = entry.counts.get(answer.id);
    if (counts === undefined) {
      entry.counts.set(answer.id, (counts = zero()));
      idTotals.set(answer.id, idTotals.get(answer.id) ?? 0);
    }
    counts.required += answer.count;
  }
}

/**
 * Every row's cells summed, for a matrix built from some rows' cells alone (analysis/read-matrix.ts reads only the
 * busiest rows'): the rows not read are these totals less the rows read, summed under `_OTHER`. `rows`: how many
 * rows there are in all.
 */
export interface WholeMatrix {
  rows: number;
  cells: readonly CellTotal[];
  serverUnknown: readonly CellTotal[];
  required: readonly RequiredCount[];
}

/**
 * The order rows are shown in: most requests first, then by label. {@link busiestRows} ranks by it too, so that the
 * rows it picks are those {@link buildMatrix} keeps.
 */
const byBusiest = (a: { requests: number; client: string }, b: { requests: number; client: string }): number =>
  b.requests - a.requests || byText(a.client, b.client);

/**
 * Cell totals → the matrix. Request cells give a row its requests and declaration states; extension cells
 * give its per-id counts (declared by the client, advertised by the server, negotiated: both). Rows are
 * ordered by requests, then label. Past `limits`, the least busy rows are summed in one row `_OTHER` and the
 * least busy ids in one id `_OTHER`, before the view is made dense: its size is bounded by the limits, not by
 * how many clients and ids there are. `serverUnknown` is the part of `cells` answered before any server instance
 * existed: it gives each row and cell its `serverUnknown` count, which shares leave out. `required` gives each cell
 * its `-32021` answers (those of a client no row has are left out: every such answer is also a request). With
 * `whole`, the cells are some rows' only: the rest of `whole` is summed under `_OTHER`, and the ids are ranked by
 * their totals over every row.
 */
export function buildMatrix(
  cells: readonly (CellTotal & RowSource)[],
  group: Grouping,
  limits: MatrixLimits = UNLIMITED,
  serverUnknown: readonly (CellTotal & RowSource)[] = [],
  required: readonly RequiredCount[] = [],
  whole?: WholeMatrix,
): MatrixView {
  let idTotals = new Map<string, number>();
  const index = new RowIndex<Entry>(group);
  const rows = index.rows;
  const entryOf = (cell: CellTotal & RowSource): Entry => index.of(cell, () => ({ row: emptyRow(rowIdentity(cell, group)), counts: new Map() }));
  fill({ entryOf, existing: (source) => index.find(source) }, idTotals, cells, serverUnknown, required);
  // The rows not read: the whole less the rows read.
  let unread: Entry | undefined;
  if (whole !== undefined) {
    const all: Entry = { row: emptyRow(otherIdentity(group)), counts: new Map() };
    idTotals = new Map();
    fill({ entryOf: () => all, existing: () => all }, idTotals, whole.cells, whole.serverUnknown, whole.required);
    for (const entry of rows) addEntry(all, entry, -1);
    unread = all;
  }
  const unreadRows = whole === undefined ? 0 : whole.rows - rows.length;

  let entries = [...rows].sort((a, b) => byBusiest(a.row, b.row));
  if (entries.length + unreadRows > limits.rows || unreadRows > 0) {
    const kept = entries.slice(0, Math.max(0, limits.rows - 1));
    const rest = entries.slice(kept.length);
    const other: Entry = { row: { ...emptyRow(otherIdentity(group)), summedRows: rest.length + unreadRows }, counts: new Map() };
    for (const entry of unread === undefined ? rest : [...rest, unread]) addEntry(other, entry);
    entries = [...kept, other];
  }

  let extensions = [...idTotals.keys()].sort(compareExtensionIds);
  let folded: Set<string> | undefined;
  if (extensions.length > limits.extensions) {
    const busiest = [...idTotals.entries()].filter(([id]) => id !== OVERFLOW_VALUE).sort((a, b) => b[1] - a[1] || compareExtensionIds(a[0], b[0]));
    const kept = new Set(busiest.slice(0, Math.max(0, limits.extensions - 1)).map(([id]) => id));
    folded = new Set(extensions.filter((id) => !kept.has(id)));
    extensions = [...[...kept].sort(compareExtensionIds), OVERFLOW_VALUE];
  }

  const view = entries.map(({ row, counts }) => {
    let other: CellCounts | undefined;
    if (folded !== undefined) {
      other = zero();
      for (const [id, count] of counts) if (folded.has(id)) add(other, count);
    }
    return {
      client: row.client,
      name: row.name,
      version: row.version,
      ...(row.service === undefined ? {} : { service: row.service }),
      ...(row.instance === undefined ? {} : { instance: row.instance }),
      requests: row.requests,
      serverUnknown: row.serverUnknown,
      declaration: row.declaration,
      ...(row.summedRows === undefined ? {} : { summedRows: row.summedRows }),
      extensions: extensions.map((id) => matrixCell(id, (id === OVERFLOW_VALUE && other !== undefined ? other : counts.get(id)) ?? zero(), row)),
    };
  });
  return { extensions, rows: view, rowsTotal: rows.length + unreadRows, extensionsTotal: idTotals.size };
}

/**
 * Which rows a matrix limited to `limit` rows shows apart, from the rows' request cells alone: the cells of the
 * `limit - 1` busiest rows (in {@link buildMatrix}'s order; the others are summed under `_OTHER`) and how many rows
 * there are. Undefined when every row is shown (no more than `limit`). Rows are those with requests: a row of
 * extension counts alone, without a request in the range, is not known here.
 */
export function busiestRows<T extends CellTotal & RowSource>(
  requestCells: readonly T[],
  group: Grouping,
  limit: number,
): { rows: number; cells: T[] } | undefined {
  // A row's first cell apart from the others: most rows have one request cell, and need no list.
  const index = new RowIndex<{ requests: number; first: T; more: T[] | undefined }>(group);
  const rows = index.rows;
  for (const cell of requestCells) {
    if (cell.kind !== SeriesKind.Requests) continue;
    const row = index.of(cell, () => ({ requests: 0, first: cell, more: undefined }));
    row.requests += cell.count;
    if (row.first !== cell) (row.more ??= []).push(cell);
  }
  if (rows.length <= limit) return undefined;
  const keep = Math.max(0, limit - 1);
  // Only rows at least as busy as the `keep`-th busiest can be kept: those alone are labelled and sorted (of ten
  // thousand instances, a few hundred).
  const counts = Float64Array.from(rows, (row) => row.requests).sort();
  const least = keep === 0 ? Number.POSITIVE_INFINITY : (counts[counts.length - keep] as number);
  const busiest = rows
    .filter((row) => row.requests >= least)
    .map((row) => ({ requests: row.requests, client: rowIdentity(row.first, group).client, cells: [row.first, ...(row.more ?? [])] }))
    .sort(byBusiest)
    .slice(0, keep);
  return { rows: rows.length, cells: busiest.flatMap((row) => row.cells) };
}

/** Every client name and version seen, with its requests, by label. */
export function clientTotals(cells: readonly CellTotal[]): { client: string; name: string | null; version: string | null; requests: number }[] {
  return buildMatrix(cells, 'client_version', { rows: Number.POSITIVE_INFINITY, extensions: 0 })
    .rows.map(({ client, name, version, requests }) => ({ client, name, version, requests }))
    .sort((a, b) => byText(a.client, b.client));
}

/** Per id, the counts over every client. */
export function extensionTotals(view: MatrixView): MatrixCell[] {
  const requests = view.rows.reduce((sum, row) => sum + row.requests, 0);
  const serverUnknown = view.rows.reduce((sum, row) => sum + row.serverUnknown, 0);
  return view.extensions.map((id, index) => {
    const total = zero();
    for (const row of view.rows) {
      const cell = row.extensions[index];
      if (cell !== undefined) add(total, cell);
    }
    return matrixCell(id, total, { requests, serverUnknown });
  });
}

/**
 * Per id, the counts over every client, straight from the cells: what {@link extensionTotals} gives for an
 * unlimited matrix, without making it dense first (5,000 clients × 2,000 ids are 10 million cells to fill and sum
 * for 2,000 totals; this is one pass over the cells).
 */
export function cellExtensionTotals(cells: readonly CellTotal[]): MatrixCell[] {
  let requests = 0;
  const counts = new Map<string, CellCounts>();
  for (const cell of cells) {
    if (cell.kind === SeriesKind.Requests) {
      requests += cell.count;
      continue;
    }
    const id = cell.extensionId ?? '';
    let into = counts.get(id);
    if (into === undefined) counts.set(id, (into = zero()));
    if (cell.clientDeclared === true) into.clientDeclared += cell.count;
    if (cell.serverDeclared === true) into.serverAdvertised += cell.count;
    if (cell.negotiated === true) into.negotiated += cell.count;
  }
  return [...counts.keys()].sort(compareExtensionIds).map((id) => matrixCell(id, counts.get(id) ?? zero(), { requests, serverUnknown: 0 }));
}

const contains = (text: string, needle: string | undefined): boolean =>
  needle === undefined || needle.trim() === '' || text.toLowerCase().includes(needle.trim().toLowerCase());

/** Rows whose label contains `rows` (and of client name `client`), ids containing `cols`: the page's filters, for what is sent. */
export function filterMatrix(view: MatrixView, filter: { rows?: string | undefined; cols?: string | undefined; client?: string | undefined }): MatrixView {
  if (filter.rows === undefined && filter.cols === undefined && filter.client === undefined) return view;
  const keep = view.extensions.map((id) => contains(id, filter.cols));
  return {
    ...view,
    extensions: view.extensions.filter((_, index) => keep[index]),
    rows: view.rows
      .filter((row) => (filter.client === undefined || row.name === filter.client) && contains(row.client, filter.rows))
      .map((row) => ({ ...row, extensions: row.extensions.filter((_, index) => keep[index]) })),
  };
}
