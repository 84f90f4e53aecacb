/**
 * The page's API parameters (dashboard/src/lib/params.ts), in process: what each read asks for from the state. The
 * cache key is the parameters, so reads that must share one answer (the matrix view's rows and the client filter's
 * choices, a cell's tooltip split and its drill-down split) must be equal, keys in the same order.
 */
import { describe, expect, it } from 'vitest';
import {
  cellSplitParams,
  changesParams,
  clientMatrixParams,
  clientTrendParams,
  examplesParams,
  extensionMatrixParams,
  matrixExportParams,
  matrixParams,
  timeseriesParams,
  trendParams,
} from '../../../dashboard/src/lib/params.js';
import { type State, parseState } from '../../../dashboard/src/lib/state.js';
import type { MatrixRow } from '../../../dashboard/src/lib/types.js';

const state = (search: string): State => parseState(search);
const key = (params: object): string => JSON.stringify(params);
const row = (fields: Partial<MatrixRow>): MatrixRow =>
  ({
    client: 'alpha@1.0',
    name: 'alpha',
    version: '1.0',
    service: null,
    instance: null,
    requests: 10,
    serverUnknown: 0,
    declaration: { declared: 10, none: 0, unknown: 0 },
    extensions: [],
    ...fields,
  }) as MatrixRow;

describe('the page API parameters', () => {
  it('the matrix by client carries no client (the page filters its rows); by service or instance the collector filters by client', () => {
    expect(matrixParams(state('?service=shop&client=alpha'))).toEqual({ from: '-24h', service: 'shop', instance: '', group: 'client' });
    expect(matrixParams(state('?group=instance&client=alpha&range=1h'))).toEqual({
      from: '-1h',
      service: '',
      instance: '',
      group: 'instance',
      client: 'alpha',
    });
  });

  it('the client filter reads the matrix view’s own answer when rows are clients, the client matrix otherwise', () => {
    for (const search of ['', '?group=client_version&service=shop']) expect(key(clientMatrixParams(state(search)))).toBe(key(matrixParams(state(search))));
    expect(clientMatrixParams(state('?group=service&client=alpha'))).toEqual({ from: '-24h', service: '', instance: '', group: 'client' });
  });

  it('a custom range is sent as absolute times in every read', () => {
    const custom = state('?range=custom&from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z');
    for (const params of [matrixParams(custom), trendParams(custom), changesParams(custom), timeseriesParams(custom, 'x'), extensionMatrixParams(custom)]) {
      expect(params).toMatchObject({ from: '2026-01-01T00:00:00.000Z', to: '2026-01-02T00:00:00.000Z' });
    }
  });

  it('exports add the text and client filters to the matrix read; trends and the extension page keep their own groupings', () => {
    const s = state('?rows=al&cols=tasks&client=alpha&group=client_version');
    expect(matrixExportParams(s)).toEqual({ from: '-24h', service: '', instance: '', group: 'client_version', rows: 'al', cols: 'tasks', client: 'alpha' });
    expect(clientTrendParams(s)).toEqual({ from: '-24h', step: '5m', service: '', instance: '', client: 'alpha', group: 'client_version', limit: 100 });
    expect(clientTrendParams(state('?group=instance'))).toMatchObject({ group: 'client' });
    expect(extensionMatrixParams(s)).toEqual({ from: '-24h', service: '', instance: '', group: 'client_version' });
    expect(timeseriesParams(s, 'com.example/a')).toEqual({ extension: 'com.example/a', from: '-24h', service: '', client: 'alpha' });
    expect(changesParams(state('?threshold=12'))).toEqual({ from: '-24h', service: '', instance: '', threshold: 12 });
  });

  it('trends ask for 5-minute steps over the default 24 h (the API’s hours would draw a young fleet as single dots), other ranges for the API’s own', () => {
    expect(trendParams(state(''))).toMatchObject({ from: '-24h', step: '5m' });
    expect(trendParams(state('?range=1h'))).not.toHaveProperty('step');
    expect(trendParams(state('?range=7d'))).not.toHaveProperty('step');
  });

  it('a cell’s split narrows to its row: a client name (or none, or no version), a service, an instance', () => {
    expect(cellSplitParams(state('?service=shop'), row({}), 'x')).toEqual({
      from: '-24h',
      service: 'shop',
      instance: '',
      client: 'alpha',
      extension: 'x',
      limit: 20,
    });
    expect(cellSplitParams(state('?group=client_version'), row({}), 'x')).toMatchObject({ client: 'alpha', version: '1.0' });
    expect(cellSplitParams(state('?group=client_version'), row({ version: null }), 'x')).toMatchObject({ client: 'alpha', unversioned: 'true' });
    expect(cellSplitParams(state(''), row({ name: null }), 'x')).toMatchObject({ unnamed: 'true' });
    expect(cellSplitParams(state('?group=instance&client=beta'), row({ service: 'shop', instance: 'shop-a' }), 'x')).toMatchObject({
      service: 'shop',
      instance: 'shop-a',
      client: 'beta',
    });
  });

  it('the example requests of a row: its client within the scope, or its service with the client filter', () => {
    expect(examplesParams(state('?service=shop&cell.ext=x'), row({}))).toEqual({
      service: 'shop',
      client: 'alpha',
      version: undefined,
      extension: 'x',
      limit: 20,
    });
    expect(examplesParams(state('?group=client_version'), row({}))).toMatchObject({ version: '1.0', extension: undefined });
    expect(examplesParams(state('?group=instance&client=beta'), row({ service: 'shop', instance: 'shop-a' }))).toEqual({
      service: 'shop',
      client: 'beta',
      version: undefined,
      extension: undefined,
      limit: 100,
    });
  });
});
