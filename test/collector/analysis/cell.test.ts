/**
 * What one matrix cell says (analysis/cell.ts), decided once for the API, the exports and the alert rules: its
 * state from its counts, and its shares over the requests whose server's declaration is known.
 */
import { describe, expect, it } from 'vitest';
import { type CellCounts, cellFigures } from '../../../collector/analysis/cell.js';

const counts = (cell: Partial<CellCounts>): CellCounts => ({ clientDeclared: 0, serverAdvertised: 0, negotiated: 0, serverUnknown: 0, ...cell });
const row = (requests: number, serverUnknown = 0) => ({ requests, serverUnknown });

describe('a matrix cell', () => {
  it('is negotiated when every known request negotiated the id', () => {
    expect(cellFigures(counts({ clientDeclared: 10, serverAdvertised: 10, negotiated: 10 }), row(10))).toEqual({
      state: 'negotiated',
      known: 10,
      negotiatedShare: 1,
      clientShare: 1,
      serverShare: 1,
    });
  });

  it('is partial when some known requests negotiated it and others did not', () => {
    expect(cellFigures(counts({ clientDeclared: 10, serverAdvertised: 4, negotiated: 4 }), row(10))).toEqual({
      state: 'partial',
      known: 10,
      negotiatedShare: 0.4,
      clientShare: 1,
      serverShare: 0.4,
    });
    // One request short of all is still partial.
    expect(cellFigures(counts({ clientDeclared: 10, serverAdvertised: 10, negotiated: 9 }), row(10)).state).toBe('partial');
  });

  it('is client when only the client declared it, server when only a server offered it, neither when nobody did', () => {
    expect(cellFigures(counts({ clientDeclared: 3 }), row(8))).toEqual({ state: 'client', known: 8, negotiatedShare: 0, clientShare: 3 / 8, serverShare: 0 });
    expect(cellFigures(counts({ serverAdvertised: 8 }), row(8))).toEqual({ state: 'server', known: 8, negotiatedShare: 0, clientShare: 0, serverShare: 1 });
    expect(cellFigures(counts({}), row(8))).toEqual({ state: 'neither', known: 8, negotiatedShare: 0, clientShare: 0, serverShare: 0 });
  });

  it('a client that declared it and a server that offered it on other requests is client: declared counts first', () => {
    expect(cellFigures(counts({ clientDeclared: 2, serverAdvertised: 5 }), row(7)).state).toBe('client');
  });

  it('takes its shares over the requests whose server is known, not over every request', () => {
    // 10 requests, 4 answered before any server instance existed: the shares are over 6.
    const figures = cellFigures(counts({ clientDeclared: 10, serverAdvertised: 6, negotiated: 6, serverUnknown: 4 }), row(10, 4));
    expect(figures).toEqual({ state: 'negotiated', known: 6, negotiatedShare: 1, clientShare: 1, serverShare: 1 });
  });

  it('is not client when the client declared it only on requests no server could answer', () => {
    // Every declaring request was server-unknown: nothing says a server lacked it.
    expect(cellFigures(counts({ clientDeclared: 3, serverUnknown: 3 }), row(5, 3))).toEqual({
      state: 'neither',
      known: 2,
      negotiatedShare: 0,
      clientShare: 0,
      serverShare: 0,
    });
    expect(cellFigures(counts({ clientDeclared: 3, serverAdvertised: 2, serverUnknown: 3 }), row(5, 3)).state).toBe('server');
  });

  it('has no shares (null, never a division by zero) when no request had a known server', () => {
    expect(cellFigures(counts({}), row(0))).toEqual({ state: 'neither', known: 0, negotiatedShare: null, clientShare: null, serverShare: null });
    expect(cellFigures(counts({ clientDeclared: 4, serverUnknown: 4 }), row(4, 4))).toEqual({
      state: 'neither',
      known: 0,
      negotiatedShare: null,
      clientShare: null,
      serverShare: null,
    });
  });

  it('never counts known requests below zero, whatever the counts say', () => {
    const figures = cellFigures(counts({ clientDeclared: 1, serverUnknown: 5 }), row(3, 5));
    expect(figures.known).toBe(0);
    expect(figures.clientShare).toBeNull();
    expect(figures.state).toBe('neither');
  });

  it('a cell negotiated on known requests only is negotiated even when server-unknown requests exist in its row', () => {
    expect(cellFigures(counts({ clientDeclared: 9, serverAdvertised: 5, negotiated: 5, serverUnknown: 4 }), row(9, 4)).state).toBe('negotiated');
    expect(cellFigures(counts({ clientDeclared: 9, serverAdvertised: 5, negotiated: 5, serverUnknown: 4 }), row(10, 4)).state).toBe('partial');
  });
});
