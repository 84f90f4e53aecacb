import { describe, expect, it } from 'vitest';
import { buildMatrix } from '../../../collector/analysis/matrix.js';
import { matrixCsv } from '../../../collector/http/api/v1/matrix/csv.js';
import { SeriesKind } from '../../../collector/model/batches.js';
import type { CellTotal } from '../../../collector/model/records.js';

describe('matrix CSV', () => {
  it('quotes what needs quoting and neutralises formulas', () => {
    const requests = (name: string | null, version: string | null, clientDeclaration: string, count: number): CellTotal => ({
      kind: SeriesKind.Requests,
      clientName: name,
      clientVersion: version,
      clientDeclaration,
      extensionId: null,
      clientDeclared: null,
      serverDeclared: null,
      negotiated: null,
      count,
    });
    const view = buildMatrix(
      [
        requests('a,"b"', '1', 'none', 1),
        requests('a,"b"', '1', 'declared', 1),
        {
          kind: SeriesKind.Extension,
          clientName: 'a,"b"',
          clientVersion: '1',
          clientDeclaration: null,
          extensionId: 'x.y/z',
          clientDeclared: true,
          serverDeclared: true,
          negotiated: true,
          count: 1,
        },
        requests('@SUM(A1)', null, 'unknown', 1),
        requests(null, null, 'unknown', 1),
      ],
      'client',
    );
    expect(matrixCsv(view).split('\r\n')).toEqual([
      'client,name,version,requests,server_unknown,declaration_unknown,declaration_none,declaration_declared,x.y/z state,x.y/z negotiated_share,x.y/z client_declared,x.y/z server_advertised,x.y/z negotiated,x.y/z required_errors',
      // Negotiated on 1 of 2 requests: partial, half.
      '"a,""b""","a,""b""",,2,0,0,1,1,partial,0.5,1,1,1,0',
      '(unknown client),,,1,0,1,0,0,neither,0,0,0,0,0',
      "'@SUM(A1),'@SUM(A1),,1,0,1,0,0,neither,0,0,0,0,0",
      '',
    ]);
  });
});
