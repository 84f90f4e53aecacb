/**
 * The page's state in its URL (dashboard/src/lib/state.ts), in process: what a query string parses to (defaults,
 * unknown values, bounds), what a state writes back (defaults left out), and the range it stands for.
 */
import { describe, expect, it } from 'vitest';
import { type State, absoluteRange, byInstance, clientGroup, parseState, rangeLabel, rangeParams, serializeState } from '../../../dashboard/src/lib/state.js';

const DEFAULT = parseState('');

describe('the page state', () => {
  it('an empty query string is the default view: the matrix over 24 hours by client, busiest first', () => {
    expect(DEFAULT).toEqual({
      view: 'matrix',
      range: '24h',
      from: '',
      to: '',
      service: '',
      instance: '',
      client: '',
      group: 'client',
      rows: '',
      cols: '',
      sort: 'requests',
      dir: 'desc',
      ext: '',
      cellClient: '',
      cellExt: '',
      threshold: 5,
      paused: false,
      ended: false,
    });
    expect(serializeState(DEFAULT)).toBe('');
  });

  it('writes only what differs from the defaults, and reads back the same state', () => {
    const state: State = {
      ...DEFAULT,
      view: 'extension',
      ext: 'com.example/a',
      group: 'client_version',
      service: 'shop',
      sort: 'com.example/a',
      dir: 'asc',
      cellClient: 'alpha@1.0',
      cellExt: 'com.example/a',
      threshold: 12.5,
      paused: true,
      ended: true,
    };
    const search = serializeState(state);
    expect(new URLSearchParams(search).toString()).toBe(search.slice(1));
    expect([...new URLSearchParams(search).keys()].sort()).toEqual([
      'cell.client',
      'cell.ext',
      'dir',
      'ended',
      'ext',
      'group',
      'paused',
      'service',
      'sort',
      'threshold',
      'view',
    ]);
    expect(new URLSearchParams(search).get('paused')).toBe('1');
    expect(parseState(search)).toEqual(state);
  });

  it('reads the drill-down cell from cell.client and cell.ext', () => {
    expect(parseState('?cell.client=beta%402.0&cell.ext=com.example%2Fb')).toMatchObject({ cellClient: 'beta@2.0', cellExt: 'com.example/b' });
  });

  it('an unknown view, range, group or direction falls back to its default; an empty sort is the default sort', () => {
    expect(parseState('?view=admin&range=1y&group=host&dir=up&sort=')).toEqual(DEFAULT);
  });

  it('a threshold outside (0, 100] or not a number is the default', () => {
    for (const value of ['0', '-3', '100.5', 'abc', 'Infinity', '']) expect(parseState(`?threshold=${value}`).threshold, value).toBe(5);
    expect(parseState('?threshold=100').threshold).toBe(100);
    expect(parseState('?threshold=0.5').threshold).toBe(0.5);
  });

  it('paused only for paused=1', () => {
    expect(parseState('?paused=1').paused).toBe(true);
    expect(parseState('?paused=true').paused).toBe(false);
    expect(parseState('?paused=0').paused).toBe(false);
  });

  it('cuts a text value at 512 characters', () => {
    expect(parseState(`?rows=${'x'.repeat(600)}`).rows).toHaveLength(512);
  });

  describe('custom ranges', () => {
    const from = '2026-06-01T10:00:00.000Z';
    const to = '2026-06-01T12:30:00.000Z';

    it('keep their from and to, write them, and read back', () => {
      const state = parseState(`?range=custom&from=${from}&to=${to}`);
      expect(state).toMatchObject({ range: 'custom', from, to });
      expect(parseState(serializeState(state))).toEqual(state);
      expect(absoluteRange(state)).toEqual({ fromMs: Date.parse(from), toMs: Date.parse(to) });
      expect(rangeParams(state)).toEqual({ from, to });
    });

    it('without a valid from and to fall back to 24 hours', () => {
      expect(parseState(`?range=custom&from=${from}`).range).toBe('24h');
      expect(parseState(`?range=custom&from=${from}&to=yesterday`).range).toBe('24h');
    });

    it('a relative range does not write a from and to it carries', () => {
      expect(serializeState({ ...DEFAULT, range: '1h', from, to })).toBe('?range=1h');
    });
  });

  it('a relative range ends now and stays relative for the API, so that now is the collector’s', () => {
    const now = Date.UTC(2026, 5, 1, 12);
    expect(absoluteRange({ ...DEFAULT, range: '15m' }, now)).toEqual({ fromMs: now - 15 * 60_000, toMs: now });
    expect(absoluteRange({ ...DEFAULT, range: '7d' }, now)).toEqual({ fromMs: now - 7 * 86_400_000, toMs: now });
    expect(rangeParams({ ...DEFAULT, range: '1h' })).toEqual({ from: '-1h' });
    expect(rangeLabel({ ...DEFAULT, range: '24h' })).toBe('last 24 hours');
  });

  it('rows by service or instance are where requests were answered; trends group by client or client version only', () => {
    expect([byInstance('client'), byInstance('client_version'), byInstance('service'), byInstance('instance')]).toEqual([false, false, true, true]);
    expect([clientGroup('client'), clientGroup('client_version'), clientGroup('service'), clientGroup('instance')]).toEqual([
      'client',
      'client_version',
      'client',
      'client',
    ]);
  });
});
