import { localTime } from './dom.js';
/**
 * Everything a view depends on lives in the URL's query string, so a view can be shared, reloaded, and walked
 * with back/forward. Defaults are left out of the URL.
 */

const VIEWS = ['matrix', 'fleet', 'extension', 'trends', 'changes', 'alerts'] as const;
export type View = (typeof VIEWS)[number];
export const RANGES = ['15m', '1h', '24h', '7d', 'custom'] as const;
type RangeKey = (typeof RANGES)[number];
export const GROUPS = ['client', 'client_version', 'service', 'instance'] as const;
export type Group = (typeof GROUPS)[number];
/** Rows by service or by instance: each row is where requests were answered, not who sent them. */
export const byInstance = (group: Group): boolean => group === 'service' || group === 'instance';
/** The client grouping a view that always shows clients (trends) takes from the state. */
export const clientGroup = (group: Group): 'client' | 'client_version' => (group === 'client_version' ? 'client_version' : 'client');
type SortDirection = 'asc' | 'desc';

export interface State {
  view: View;
  range: RangeKey;
  /** ISO times, only for `range=custom`. */
  from: string;
  to: string;
  service: string;
  instance: string;
  client: string;
  group: Group;
  /** Row (client) and column (extension id) text filters of the matrix. */
  rows: string;
  cols: string;
  /** `client`, `requests`, or an extension id. */
  sort: string;
  dir: SortDirection;
  /** The extension page's id. */
  ext: string;
  /** The drill-down cell: row label and extension id. */
  cellClient: string;
  cellExt: string;
  /** What changed: threshold in percentage points. */
  threshold: number;
  paused: boolean;
  /** Fleet: also list the sessions and instances that ended (within the collector's retention for them). */
  ended: boolean;
}

const DEFAULTS: State = {
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
};

const KEYS: Record<keyof State, string> = {
  view: 'view',
  range: 'range',
  from: 'from',
  to: 'to',
  service: 'service',
  instance: 'instance',
  client: 'client',
  group: 'group',
  rows: 'rows',
  cols: 'cols',
  sort: 'sort',
  dir: 'dir',
  ext: 'ext',
  cellClient: 'cell.client',
  cellExt: 'cell.ext',
  threshold: 'threshold',
  paused: 'paused',
  ended: 'ended',
};

const oneOf = <T extends string>(values: readonly T[], value: string | null, fallback: T): T => (values.includes(value as T) ? (value as T) : fallback);

export function parseState(search: string): State {
  const params = new URLSearchParams(search);
  const text = (key: keyof State): string => (params.get(KEYS[key]) ?? '').slice(0, 512);
  const threshold = Number(params.get(KEYS.threshold));
  const state: State = {
    view: oneOf(VIEWS, params.get(KEYS.view), DEFAULTS.view),
    range: oneOf(RANGES, params.get(KEYS.range), DEFAULTS.range),
    from: text('from'),
    to: text('to'),
    service: text('service'),
    instance: text('instance'),
    client: text('client'),
    group: oneOf(GROUPS, params.get(KEYS.group), DEFAULTS.group),
    rows: text('rows'),
    cols: text('cols'),
    sort: text('sort') || DEFAULTS.sort,
    dir: oneOf(['asc', 'desc'] as const, params.get(KEYS.dir), DEFAULTS.dir),
    ext: text('ext'),
    cellClient: text('cellClient'),
    cellExt: text('cellExt'),
    threshold: Number.isFinite(threshold) && threshold > 0 && threshold <= 100 ? threshold : DEFAULTS.threshold,
    paused: params.get(KEYS.paused) === '1',
    ended: params.get(KEYS.ended) === '1',
  };
  if (state.range === 'custom' && (!validTime(state.from) || !validTime(state.to))) state.range = DEFAULTS.range;
  return state;
}

const validTime = (value: string): boolean => value !== '' && !Number.isNaN(Date.parse(value));

export function serializeState(state: State): string {
  const params = new URLSearchParams();
  for (const key of Object.keys(KEYS) as (keyof State)[]) {
    const value = state[key];
    if (value === DEFAULTS[key]) continue;
    if ((key === 'from' || key === 'to') && state.range !== 'custom') continue;
    params.set(KEYS[key], typeof value === 'boolean' ? (value ? '1' : '0') : String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

export function href(state: State, changes: Partial<State>): string {
  return `${location.pathname}${serializeState({ ...state, ...changes })}`;
}

const RANGE_MS: Record<Exclude<RangeKey, 'custom'>, number> = { '15m': 15 * 60_000, '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000 };

/** The state's range as absolute times (relative ranges end now). */
export function absoluteRange(state: State, now = Date.now()): { fromMs: number; toMs: number } {
  if (state.range === 'custom') return { fromMs: Date.parse(state.from), toMs: Date.parse(state.to) };
  return { fromMs: now - RANGE_MS[state.range], toMs: now };
}

/** `from`/`to` query parameters for the API: relative ranges stay relative (`-24h`), so "now" is the collector's. */
export function rangeParams(state: State): Record<string, string> {
  if (state.range === 'custom') return { from: new Date(Date.parse(state.from)).toISOString(), to: new Date(Date.parse(state.to)).toISOString() };
  return { from: `-${state.range}` };
}

export function rangeLabel(state: State): string {
  if (state.range === 'custom') return `${localTime(Date.parse(state.from))} – ${localTime(Date.parse(state.to))}`;
  return { '15m': 'last 15 minutes', '1h': 'last hour', '24h': 'last 24 hours', '7d': 'last 7 days' }[state.range];
}

/** The state's scope in words (the filters that narrow every view): the views' summaries say what they count. */
export function scopeText(state: State): string {
  const parts = [state.service === '' ? 'all services' : `service ${state.service}`];
  if (state.instance !== '') parts.push(`instance ${state.instance}`);
  if (state.client !== '') parts.push(`client ${state.client}`);
  return parts.join(', ');
}
