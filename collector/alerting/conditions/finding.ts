import type { RuleScope } from '../rules/rule.js';

/** What a condition reports for one thing that holds: the alert's own labels, a measure and words for people. */
export interface Finding {
  /** The condition's labels (service, extension, client, instance…); the rule's and `alertname`, `severity` are added. */
  labels: Record<string, string>;
  /** The measure, for `{{ $value }}` (points dropped, errors per minute, variants…). */
  value: number;
  summary: string;
  description: string;
  /** The dashboard view that shows the cause. */
  dashboardPath: string;
}

/** A value the label cannot be empty for (an instance without an id, a client without a name). */
const NONE = '(none)';

export const orNone = (value: string | null | undefined): string => (value === null || value === undefined || value === '' ? NONE : value);

/** In scope: the rule names no list for this dimension, or the list has the value. */
export function inScope(scope: RuleScope, dimension: keyof RuleScope, value: string | null | undefined): boolean {
  const list = scope[dimension];
  return list === undefined || (value !== null && value !== undefined && list.has(value));
}

/** A dashboard URL (its state lives in the query string); empty values are left out. */
export function dashboardPath(view: 'matrix' | 'fleet' | 'extension' | 'trends', params: Record<string, string | null | undefined>): string {
  const search = new URLSearchParams({ view });
  for (const [key, value] of Object.entries(params)) if (value !== null && value !== undefined && value !== '') search.set(key, value);
  return `/?${search.toString()}`;
}

/** At most `limit` items, then how many more. */
export function listed(items: readonly string[], limit = 5): string {
  const shown = items.slice(0, limit).join(', ');
  return items.length > limit ? `${shown} and ${items.length - limit} more` : shown;
}

/** A window as the dashboard's custom range (`range=custom&from=…&to=…`, ISO UTC): the view shows what the rule measured. */
export function viewRange(window: { fromMs: number; toMs: number } | undefined): Record<string, string> {
  if (window === undefined) return {};
  return { range: 'custom', from: new Date(window.fromMs).toISOString(), to: new Date(window.toMs).toISOString() };
}

export const points = (share: number): string => `${(share * 100).toFixed(1)}%`;

/**
 * A number for people: thousands grouped, and no more decimals than three significant digits need, trailing zeros
 * left out (`36`, `36.4`, `1.2`, `0.05`, `12,345`).
 */
export function figure(value: number): string {
  const magnitude = value === 0 ? 0 : Math.floor(Math.log10(Math.abs(value)));
  return value.toLocaleString('en-US', { maximumFractionDigits: Math.min(2, Math.max(0, 2 - magnitude)) });
}
