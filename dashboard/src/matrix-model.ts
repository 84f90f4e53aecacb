import type { ExtensionCounts, MatrixResponse, MatrixRow } from './types.js';

/**
 * A matrix cell sums many requests. Its state is the strongest thing that happened in it: negotiated on at least
 * one request; else declared by the client (and no server answering it offered the id); else offered by the
 * server only; else neither. The shares say how much of the row's requests each covers.
 */
export type CellState = 'negotiated' | 'client' | 'server' | 'neither';

export const STATES: Record<CellState, { symbol: string; short: string; text: string }> = {
  negotiated: { symbol: '●', short: 'both', text: 'negotiated' },
  client: { symbol: '◐', short: 'client', text: 'client declares, server lacks' },
  server: { symbol: '◑', short: 'server', text: 'server offers, client lacks' },
  neither: { symbol: '○', short: 'neither', text: 'neither' },
};

export interface Cell extends ExtensionCounts {
  state: CellState;
  requests: number;
  /**
   * The requests shares are taken over: the row's requests whose server's declaration is known (those answered
   * before any server instance existed say nothing about what the server offers).
   */
  known: number;
  /** The share shown in the cell: of the `known` requests, the one the state is about. */
  share: number | null;
}

const NO_COUNTS = (id: string): ExtensionCounts => ({ id, clientDeclared: 0, serverAdvertised: 0, negotiated: 0, serverUnknown: 0 });

export function cellOf(row: MatrixRow, index: number, id: string): Cell {
  const counts = row.extensions[index]?.id === id ? row.extensions[index] : (row.extensions.find((cell) => cell.id === id) ?? NO_COUNTS(id));
  const c = counts ?? NO_COUNTS(id);
  const state: CellState = c.negotiated > 0 ? 'negotiated' : c.clientDeclared > 0 ? 'client' : c.serverAdvertised > 0 ? 'server' : 'neither';
  const known = Math.max(0, row.requests - row.serverUnknown);
  // The client's declarations on requests no server saw are not part of the known requests either.
  const clientDeclaredKnown = c.clientDeclared - c.serverUnknown;
  const numerator = state === 'negotiated' ? c.negotiated : state === 'client' ? clientDeclaredKnown : state === 'server' ? c.serverAdvertised : 0;
  return { ...c, state, requests: row.requests, known, share: known === 0 ? null : numerator / known };
}

/** The whole story of a cell, for its tooltip and its accessible description. */
export function describeCell(row: MatrixRow, cell: Cell): string[] {
  const unknown = row.serverUnknown;
  const base = unknown === 0 ? 'requests' : 'requests with a known server';
  const of = (n: number): string => `${n.toLocaleString('en')} of ${cell.known.toLocaleString('en')} ${base}${cell.known === 0 ? '' : ` (${((n / cell.known) * 100).toFixed(1)} %)`}`;
  const lines = [
    `${STATES[cell.state].symbol} ${STATES[cell.state].text}`,
    `negotiated: ${of(cell.negotiated)}`,
    `client declared: ${of(cell.clientDeclared - cell.serverUnknown)}`,
    `server advertised: ${of(cell.serverAdvertised)}`,
    `client declared, server lacked: ${(cell.clientDeclared - cell.serverUnknown - cell.negotiated).toLocaleString('en')}`,
    `server offered, client lacked: ${(cell.serverAdvertised - cell.negotiated).toLocaleString('en')}`,
  ];
  if (unknown > 0) {
    lines.push(
      `answered before any server instance existed: ${unknown.toLocaleString('en')} of ${row.requests.toLocaleString('en')} requests` +
        `${cell.serverUnknown > 0 ? ` (${cell.serverUnknown.toLocaleString('en')} declaring this extension)` : ''}, not in the shares`,
    );
  }
  return lines;
}

export interface MatrixFilter {
  rows: string;
  cols: string;
  /** Exact client name (the global client filter). */
  client: string;
  sort: string;
  dir: 'asc' | 'desc';
}

export interface MatrixSlice {
  extensions: { id: string; index: number }[];
  rows: MatrixRow[];
}

const contains = (text: string, needle: string): boolean => needle === '' || text.toLowerCase().includes(needle.toLowerCase());

/** Column and row filters, then the sort; the data itself is never changed. */
export function sliceMatrix(matrix: MatrixResponse, filter: MatrixFilter): MatrixSlice {
  const extensions = matrix.extensions.map((id, index) => ({ id, index })).filter(({ id }) => contains(id, filter.cols.trim()));
  const rows = matrix.rows.filter((row) => (filter.client === '' || row.name === filter.client) && contains(row.client, filter.rows.trim()));
  const sign = filter.dir === 'asc' ? 1 : -1;
  const byLabel = (a: MatrixRow, b: MatrixRow): number => (a.client < b.client ? -1 : a.client > b.client ? 1 : 0);
  const column = extensions.find(({ id }) => id === filter.sort);
  const key =
    filter.sort === 'client'
      ? null
      : filter.sort === 'requests' || column === undefined
        ? (row: MatrixRow): number => row.requests
        : (row: MatrixRow): number => {
            const cell = cellOf(row, column.index, column.id);
            // Negotiated first, then client-only, then server-only: the state's rank, then its share.
            const rank = { negotiated: 3, client: 2, server: 1, neither: 0 }[cell.state];
            return rank + (cell.share ?? 0);
          };
  const sorted = [...rows].sort((a, b) => (key === null ? sign * byLabel(a, b) : sign * (key(a) - key(b)) || byLabel(a, b)));
  return { extensions, rows: sorted };
}

export function matrixJson(matrix: MatrixResponse, slice: MatrixSlice): string {
  return `${JSON.stringify(
    {
      from: matrix.from,
      to: matrix.to,
      resolution: matrix.resolution,
      group: matrix.group,
      extensions: slice.extensions.map(({ id }) => id),
      rows: slice.rows.map((row) => ({
        ...row,
        extensions: slice.extensions.map(({ id, index }) => {
          const cell = cellOf(row, index, id);
          return { id, state: cell.state, clientDeclared: cell.clientDeclared, serverAdvertised: cell.serverAdvertised, negotiated: cell.negotiated };
        }),
      })),
    },
    null,
    2,
  )}\n`;
}

/** RFC 4180 fields; a text starting like a formula is prefixed with a quote (it came from a client). */
function csvField(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function matrixCsv(slice: MatrixSlice): string {
  const header: string[] = ['client', 'name', 'version', 'requests', 'declaration_unknown', 'declaration_none', 'declaration_declared'];
  for (const { id } of slice.extensions) header.push(`${id} state`, `${id} client_declared`, `${id} server_advertised`, `${id} negotiated`);
  const lines = [header.map(csvField).join(',')];
  for (const row of slice.rows) {
    const fields: (string | number | null)[] = [row.client, row.name, row.version, row.requests, row.declaration.unknown, row.declaration.none, row.declaration.declared];
    for (const { id, index } of slice.extensions) {
      const cell = cellOf(row, index, id);
      fields.push(cell.state, cell.clientDeclared, cell.serverAdvertised, cell.negotiated);
    }
    lines.push(fields.map(csvField).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** Markdown table cells: pipes, backslashes and markup-looking characters escaped, newlines flattened. */
function markdownText(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').replace(/([\\|`*_[\]<>#])/g, '\\$1');
}

export type MarkdownMeaning = 'negotiated' | 'declared';

/**
 * The matrix in the shape of the official Extension Support Matrix: one row per client, one column per
 * extension, ✅ or ❌, and a footnote with the measurement window and the request counts.
 */
export function matrixMarkdown(matrix: MatrixResponse, slice: MatrixSlice, meaning: MarkdownMeaning, scope: string): string {
  const header = `| Client | ${slice.extensions.map(({ id }) => `\`${id.replaceAll('`', '')}\``).join(' | ')} |`;
  const rule = `| --- | ${slice.extensions.map(() => ':---:').join(' | ')} |`;
  const lines = [header, rule];
  for (const row of slice.rows) {
    const marks = slice.extensions.map(({ id, index }) => {
      const cell = cellOf(row, index, id);
      const yes = meaning === 'negotiated' ? cell.negotiated > 0 : cell.clientDeclared > 0;
      return yes ? '✅' : '❌';
    });
    lines.push(`| ${markdownText(row.client)}¹ | ${marks.join(' | ')} |`);
  }
  const total = slice.rows.reduce((sum, row) => sum + row.requests, 0);
  const what =
    meaning === 'negotiated'
      ? '✅ = negotiated (declared by the client and advertised by the answering server) on at least one request; ❌ = on none.'
      : '✅ = the client declared the extension on at least one request; ❌ = on none.';
  const counts = slice.rows.map((row) => `${markdownText(row.client)}: ${row.requests.toLocaleString('en')}`).join('; ');
  lines.push('', `¹ Measured by extscope from ${matrix.from} to ${matrix.to} (${scope}), ${total.toLocaleString('en')} requests. ${what} Requests per client: ${counts}.`);
  return `${lines.join('\n')}\n`;
}
