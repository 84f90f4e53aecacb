/**
 * The page’s matrix model (dashboard/src/lib/matrix-model.ts), in process: finding a row’s cell, the figure a cell
 * shows for each state, its description, the row and column filters and sorts, and the Markdown export.
 */
import { describe, expect, it } from 'vitest';
import {
  type Cell,
  type MatrixFilter,
  STATES,
  cellOf,
  describeCell,
  matrixMarkdown,
  cellFigure,
  sliceMatrix,
} from '../../../dashboard/src/lib/matrix-model.js';
import type { ExtensionCounts, MatrixResponse, MatrixRow } from '../../../dashboard/src/lib/types.js';

const A = 'com.example/a';
const B = 'com.example/b';

function counts(id: string, cell: Partial<ExtensionCounts> = {}): ExtensionCounts {
  return {
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
    ...cell,
  };
}

function row(client: string, requests: number, extensions: ExtensionCounts[], serverUnknown = 0): MatrixRow {
  const [name, version] = client.split('@');
  return {
    client,
    name: name ?? null,
    version: version ?? null,
    requests,
    serverUnknown,
    declaration: { unknown: 0, none: 0, declared: requests },
    extensions,
  };
}

function matrix(rows: MatrixRow[], extensions = [A, B]): MatrixResponse {
  return { from: '2026-06-01T00:00:00.000Z', to: '2026-06-02T00:00:00.000Z', resolution: 'hour', group: 'client', extensions, totals: [], rows };
}

const FILTER: MatrixFilter = { rows: '', cols: '', client: '', group: 'client', sort: 'requests', dir: 'desc' };

describe('the matrix model', () => {
  describe('cellOf', () => {
    it('finds a row’s cell at the column’s index, or by id when the row lists its cells in another order', () => {
      const alpha = row('alpha', 10, [counts(A, { negotiated: 3 }), counts(B, { negotiated: 5 })]);
      expect(cellOf(alpha, 1, B)).toMatchObject({ id: B, negotiated: 5, requests: 10 });
      const shuffled = row('beta', 4, [counts(B, { negotiated: 2 }), counts(A, { negotiated: 1 })]);
      expect(cellOf(shuffled, 0, A)).toMatchObject({ id: A, negotiated: 1, requests: 4 });
    });

    it('a row with no counts for an id has an empty cell of that id: state neither, no shares', () => {
      const cell = cellOf(row('alpha', 7, [counts(A)]), 1, B);
      expect(cell).toEqual({ ...counts(B), requests: 7 });
    });
  });

  describe('cellFigure', () => {
    const shares = { negotiatedShare: 0.25, clientShare: 0.5, serverShare: 0.75 };
    it('is the negotiated share in every state a cell can be declared in, none for neither', () => {
      expect(cellFigure(counts(A, { ...shares, state: 'negotiated' }))).toBe(0.25);
      expect(cellFigure(counts(A, { ...shares, state: 'partial' }))).toBe(0.25);
      expect(cellFigure(counts(A, { ...shares, negotiatedShare: 0, state: 'client' }))).toBe(0);
      expect(cellFigure(counts(A, { ...shares, negotiatedShare: 0, state: 'server' }))).toBe(0);
      expect(cellFigure(counts(A, { ...shares, state: 'neither' }))).toBeNull();
    });

    it('passes on a null share (no known request) rather than a zero', () => {
      expect(cellFigure(counts(A, { state: 'client', negotiatedShare: null }))).toBeNull();
    });
  });

  describe('describeCell', () => {
    it('says the state in words and every count, with shares in percent', () => {
      const alpha = row('alpha', 1200, []);
      const cell: Cell = {
        ...counts(A, {
          clientDeclared: 1000,
          serverAdvertised: 600,
          negotiated: 500,
          required: 3,
          state: 'partial',
          known: 1200,
          negotiatedShare: 500 / 1200,
          clientShare: 1000 / 1200,
          serverShare: 0.5,
        }),
        requests: 1200,
      };
      expect(describeCell(alpha, cell)).toEqual([
        `${STATES.partial.symbol} negotiated on some requests, not others`,
        'negotiated: 500 of 1,200 requests (41.7 %)',
        'client declared: 1,000 of 1,200 requests (83.3 %)',
        'server advertised: 600 of 1,200 requests (50.0 %)',
        'client declared, server lacked: 500',
        'server offered, client lacked: 100',
        '-32021 answers naming it: 3',
      ]);
    });

    it('with server-unknown requests in the row: shares over the known ones, and a line for the rest', () => {
      const alpha = row('alpha', 10, [], 4);
      const cell: Cell = {
        ...counts(A, {
          clientDeclared: 8,
          serverAdvertised: 6,
          negotiated: 6,
          serverUnknown: 2,
          state: 'negotiated',
          known: 6,
          negotiatedShare: 1,
          clientShare: 1,
          serverShare: 1,
        }),
        requests: 10,
      };
      const lines = describeCell(alpha, cell);
      expect(lines[1]).toBe('negotiated: 6 of 6 requests with a known server (100.0 %)');
      expect(lines[2]).toBe('client declared: 6 of 6 requests with a known server (100.0 %)');
      expect(lines.at(-1)).toBe('answered before any server instance existed: 4 of 10 requests (2 declaring this extension), not in the shares');
    });

    it('a cell with no known request shows counts without a share', () => {
      const lines = describeCell(row('alpha', 0, []), { ...counts(A), requests: 0 });
      expect(lines[0]).toBe(`${STATES.neither.symbol} neither`);
      expect(lines[1]).toBe('negotiated: 0 of 0 requests');
    });
  });

  describe('sliceMatrix', () => {
    const rows = [
      row('alpha@1.0', 5, [counts(A, { state: 'client', clientShare: 1 }), counts(B, { state: 'negotiated', negotiatedShare: 1 })]),
      row('beta@2.0', 20, [counts(A, { state: 'partial', negotiatedShare: 0.5 }), counts(B, { state: 'server', serverShare: 0.2 })]),
      row('Gamma@1.0', 20, [counts(A, { state: 'negotiated', negotiatedShare: 1 }), counts(B)]),
    ];
    const labels = (slice: { rows: MatrixRow[] }): string[] => slice.rows.map((entry) => entry.client);

    it('sorts by requests, busiest first, ties by label; ascending reverses', () => {
      expect(labels(sliceMatrix(matrix(rows), FILTER))).toEqual(['Gamma@1.0', 'beta@2.0', 'alpha@1.0']);
      expect(labels(sliceMatrix(matrix(rows), { ...FILTER, dir: 'asc' }))).toEqual(['alpha@1.0', 'Gamma@1.0', 'beta@2.0']);
    });

    it('sorts by label in code-point order', () => {
      expect(labels(sliceMatrix(matrix(rows), { ...FILTER, sort: 'client', dir: 'asc' }))).toEqual(['Gamma@1.0', 'alpha@1.0', 'beta@2.0']);
    });

    it('sorts by an extension column: negotiated, partial, client, server, neither, then by the negotiated share', () => {
      expect(labels(sliceMatrix(matrix(rows), { ...FILTER, sort: A }))).toEqual(['Gamma@1.0', 'beta@2.0', 'alpha@1.0']);
      expect(labels(sliceMatrix(matrix(rows), { ...FILTER, sort: B }))).toEqual(['alpha@1.0', 'beta@2.0', 'Gamma@1.0']);
    });

    it('a sort by a column the filter hides falls back to requests', () => {
      expect(labels(sliceMatrix(matrix(rows), { ...FILTER, sort: B, cols: '/a' }))).toEqual(['Gamma@1.0', 'beta@2.0', 'alpha@1.0']);
    });

    it('filters columns and rows by text in any case, trimmed, keeping each column’s index into the rows', () => {
      const slice = sliceMatrix(matrix(rows), { ...FILTER, cols: ' /B ', rows: 'GAMMA' });
      expect(slice.extensions).toEqual([{ id: B, index: 1 }]);
      expect(labels(slice)).toEqual(['Gamma@1.0']);
    });

    it('the client filter keeps one client name’s rows when rows are clients, and is the collector’s when rows are instances', () => {
      expect(labels(sliceMatrix(matrix(rows), { ...FILTER, client: 'beta' }))).toEqual(['beta@2.0']);
      expect(labels(sliceMatrix(matrix(rows), { ...FILTER, client: 'beta', group: 'instance' }))).toEqual(['Gamma@1.0', 'beta@2.0', 'alpha@1.0']);
    });

    it('never changes the matrix it slices', () => {
      const answer = matrix(rows);
      const before = JSON.stringify(answer);
      sliceMatrix(answer, { ...FILTER, sort: A, dir: 'asc', rows: 'a' });
      expect(JSON.stringify(answer)).toBe(before);
    });
  });

  describe('matrixMarkdown', () => {
    const rows = [
      row('alpha', 1500, [counts(A, { state: 'partial', clientDeclared: 3 }), counts(B, { state: 'server' })]),
      row('beta', 2, [counts(A, { state: 'client', clientDeclared: 2 })]),
    ];

    it('marks negotiated (or partial) cells, or declared ones, and sums the requests in its footnote', () => {
      const answer = matrix(rows);
      const slice = sliceMatrix(answer, FILTER);
      const negotiated = matrixMarkdown(answer, slice, 'negotiated', 'all services').split('\n');
      expect(negotiated.slice(0, 4)).toEqual([`| Client | \`${A}\` | \`${B}\` |`, '| --- | :---: | :---: |', '| alpha¹ | ✅ | ❌ |', '| beta¹ | ❌ | ❌ |']);
      expect(negotiated[5]).toMatch(
        /^¹ Measured by extscope from 2026-06-01T00\\:00\\:00\\\.000Z to .* \(all services\), 1,502 requests\. ✅ = negotiated .* Requests per client: alpha: 1,500; beta: 2\.$/,
      );
      const declared = matrixMarkdown(answer, slice, 'declared', 'all services', 'Service').split('\n');
      expect(declared.slice(0, 4)).toEqual([`| Service | \`${A}\` | \`${B}\` |`, '| --- | :---: | :---: |', '| alpha¹ | ✅ | ❌ |', '| beta¹ | ✅ | ❌ |']);
      expect(declared[5]).toContain('Requests per service:');
    });

    it('escapes what Markdown or an autolink would read in a label, and flattens newlines', () => {
      const answer = matrix([row('a|b *c* https://x.example\nnext', 1, [])], [A]);
      const lines = matrixMarkdown(answer, sliceMatrix(answer, FILTER), 'negotiated', 'svc').split('\n');
      expect(lines[2]).toBe('| a\\|b \\*c\\* https\\://x\\.example next¹ | ❌ |');
    });

    it('strips backticks from an id in the header', () => {
      const answer = matrix([row('alpha', 1, [])], ['x`y']);
      expect(matrixMarkdown(answer, sliceMatrix(answer, FILTER), 'negotiated', 'svc').split('\n')[0]).toBe('| Client | `xy` |');
    });
  });
});
