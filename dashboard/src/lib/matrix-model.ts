import type { ExtensionCounts, MatrixResponse, MatrixRow } from './types.js';

/**
 * A cell's state and shares are the collector's (analysis/cell.ts, served by `/api/v1/matrix`): the page only
 * says them, so that the matrix, its exports, the other views and the alerts can never disagree.
 */
export type CellState = ExtensionCounts['state'];

/** How each state looks: a symbol and a word (colour is never the only carrier), and the words for a reader. */
export const STATES: Record<CellState, { symbol: string; short: string; text: string }> = {
  negotiated: { symbol: '●', short: 'all', text: 'negotiated on every request' },
  partial: { symbol: '◒', short: 'partial', text: 'negotiated on some requests, not others' },
  client: { symbol: '◐', short: 'client', text: 'client declares, server lacks' },
  server: { symbol: '◑', short: 'server', text: 'server offers, client lacks' },
  neither: { symbol: '○', short: 'neither', text: 'neither' },
};

export interface Cell extends ExtensionCounts {
  requests: number;
}

const NO_COUNTS = (id: string): ExtensionCounts => ({
  id,
  clientDeclared: 0,
  serverAdvertised: 0,
  negotiated: 0,
  serverUnknown: 0,
  required: 0,
  state: 'neither',
  known: 0,
  negotiatedShare: null,
  clientShare: null,
  serverShare: null,
});

export function cellOf(row: MatrixRow, index: number, id: string): Cell {
  const counts = row.extensions[index]?.id === id ? row.extensions[index] : row.extensions.find((cell) => cell.id === id);
  return { ...(counts ?? NO_COUNTS(id)), requests: row.requests };
}

/**
 * The figure a cell shows: its negotiated share, whatever its state, so that two figures side by side always compare
 * (a client-only or server-only cell shows 0 %); the declared and advertised shares are in its description. A cell
 * nobody declared shows none.
 */
export function cellFigure(cell: ExtensionCounts): number | null {
  return cell.state === 'neither' ? null : cell.negotiatedShare;
}

/** The whole story of a cell, for its tooltip and its accessible description. */
export function describeCell(row: MatrixRow, cell: Cell): string[] {
  const unknown = row.serverUnknown;
  const base = unknown === 0 ? 'requests' : 'requests with a known server';
  const of = (n: number, value: number | null): string =>
    `${n.toLocaleString('en')} of ${cell.known.toLocaleString('en')} ${base}${value === null ? '' : ` (${(value * 100).toFixed(1)} %)`}`;
  const lines = [
    `${STATES[cell.state].symbol} ${STATES[cell.state].text}`,
    `negotiated: ${of(cell.negotiated, cell.negotiatedShare)}`,
    `client declared: ${of(cell.clientDeclared - cell.serverUnknown, cell.clientShare)}`,
    `server advertised: ${of(cell.serverAdvertised, cell.serverShare)}`,
    `client declared, server lacked: ${(cell.clientDeclared - cell.serverUnknown - cell.negotiated).toLocaleString('en')}`,
    `server offered, client lacked: ${(cell.serverAdvertised - cell.negotiated).toLocaleString('en')}`,
    `-32021 answers naming it: ${cell.required.toLocaleString('en')}`,
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
  /** Exact client name (the global client filter); rows by service or instance were narrowed by the collector. */
  client: string;
  group: 'client' | 'client_version' | 'service' | 'instance';
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
  const byClient = filter.group === 'client' || filter.group === 'client_version';
  const rows = matrix.rows.filter((row) => (!byClient || filter.client === '' || row.name === filter.client) && contains(row.client, filter.rows.trim()));
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
            // Negotiated first, then client-only, then server-only: the state's rank, then its negotiated share.
            const rank = { negotiated: 4, partial: 3, client: 2, server: 1, neither: 0 }[cell.state];
            return rank + (cellFigure(cell) ?? 0);
          };
  const sorted = [...rows].sort((a, b) => (key === null ? sign * byLabel(a, b) : sign * (key(a) - key(b)) || byLabel(a, b)));
  return { extensions, rows: sorted };
}

/**
 * Markdown table cells: pipes, backslashes and markup-looking characters escaped, newlines flattened. `.`, `:`
 * and `@` are escaped too: GitHub turns bare `https://…`, `www.…` and `name@host.tld` into links (GFM's autolink
 * extension), and an escaped character breaks each of those forms while rendering the same.
 */
function markdownText(text: string): string {
  return text.replace(/[\r\n]+/g, ' ').replace(/([\\|`*_[\]<>#~.:@])/g, '\\$1');
}

export type MarkdownMeaning = 'negotiated' | 'declared';

/**
 * The matrix in the shape of the official Extension Support Matrix: one row per client, one column per
 * extension, ✅ or ❌, and a footnote with the measurement window and the request counts.
 */
export function matrixMarkdown(matrix: MatrixResponse, slice: MatrixSlice, meaning: MarkdownMeaning, scope: string, heading = 'Client'): string {
  const header = `| ${heading} | ${slice.extensions.map(({ id }) => `\`${id.replaceAll('`', '')}\``).join(' | ')} |`;
  const rule = `| --- | ${slice.extensions.map(() => ':---:').join(' | ')} |`;
  const lines = [header, rule];
  for (const row of slice.rows) {
    const marks = slice.extensions.map(({ id, index }) => {
      const cell = cellOf(row, index, id);
      const yes = meaning === 'negotiated' ? cell.state === 'negotiated' || cell.state === 'partial' : cell.clientDeclared > 0;
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
  lines.push(
    '',
    `¹ Measured by extscope from ${markdownText(matrix.from)} to ${markdownText(matrix.to)} (${markdownText(scope)}), ${total.toLocaleString('en')} requests. ${what} Requests per ${heading.toLowerCase()}: ${counts}.`,
  );
  return `${lines.join('\n')}\n`;
}
