import { describe, expect, it } from 'vitest';
import { buildMatrix } from '../../../collector/analysis/matrix.js';
import { knownRequests, negotiatedShare } from '../../../collector/analysis/share.js';
import { SeriesKind } from '../../../collector/model/batches.js';
import type { CellTotal } from '../../../collector/model/records.js';

const requests = (client: string, count: number): CellTotal => ({
  kind: SeriesKind.Requests,
  clientName: client,
  clientVersion: '1',
  clientDeclaration: 'declared',
  extensionId: null,
  clientDeclared: null,
  serverDeclared: null,
  negotiated: null,
  count,
});
const extension = (client: string, id: string, count: number, negotiated: boolean): CellTotal => ({
  kind: SeriesKind.Extension,
  clientName: client,
  clientVersion: '1',
  clientDeclaration: null,
  extensionId: id,
  clientDeclared: true,
  serverDeclared: negotiated,
  negotiated,
  count,
});

describe('the matrix keeps answers given before any server instance existed apart', () => {
  it('counts them per row and cell, also once rows and ids are folded into _OTHER', () => {
    const cells = [
      requests('a', 10),
      extension('a', 'x.y/one', 8, true),
      extension('a', 'x.y/one', 2, false),
      requests('b', 4),
      extension('b', 'x.y/two', 4, false),
      requests('c', 1),
    ];
    const unknown = [requests('a', 2), extension('a', 'x.y/one', 2, false), requests('b', 4), extension('b', 'x.y/two', 4, false)];
    const full = buildMatrix(cells, 'client', undefined, unknown);
    const a = full.rows.find((row) => row.client === 'a');
    expect(a).toMatchObject({ requests: 10, serverUnknown: 2 });
    // 8 of the 8 requests a server saw: negotiated on every one of them, not partial.
    expect(a?.extensions.find((cell) => cell.id === 'x.y/one')).toEqual({
      id: 'x.y/one',
      clientDeclared: 10,
      serverAdvertised: 8,
      negotiated: 8,
      serverUnknown: 2,
      required: 0,
      state: 'negotiated',
      known: 8,
      negotiatedShare: 1,
      clientShare: 1,
      serverShare: 1,
    });
    // 8 of the 8 requests a server saw, not 8 of 10.
    expect(negotiatedShare(8, a?.requests ?? 0, a?.serverUnknown ?? 0)).toBe(1);

    const folded = buildMatrix(cells, 'client', { rows: 2, extensions: 1 }, unknown);
    const other = folded.rows.find((row) => row.client === '_OTHER');
    expect(folded.extensions).toEqual(['_OTHER']);
    expect(other).toMatchObject({ requests: 5, serverUnknown: 4 });
    expect(other?.extensions).toEqual([
      {
        id: '_OTHER',
        clientDeclared: 4,
        serverAdvertised: 0,
        negotiated: 0,
        serverUnknown: 4,
        required: 0,
        state: 'neither',
        known: 1,
        negotiatedShare: 0,
        clientShare: 0,
        serverShare: 0,
      },
    ]);
  });

  it('has no share when no request had a known server, and never a negative base', () => {
    expect(negotiatedShare(0, 4, 4)).toBeNull();
    expect(knownRequests(3, 5)).toBe(0);
    expect(buildMatrix([requests('a', 3)], 'client').rows[0]?.serverUnknown).toBe(0);
  });
});
