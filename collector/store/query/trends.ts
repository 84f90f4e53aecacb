import type { FilterQuery } from './filters.js';

/**
 * Reads of the rollups per time step, for the dashboard's trends: requests by declaration state and by client,
 * per extension id, and `-32021` answers. Each returns sums per step (slot 0 = the step starting at `fromMs`);
 * shaping them (dense arrays, shares, top clients) is the caller's work.
 */
export interface TrendReader {
  declarationTrend(query: TrendQuery): Promise<TrendResult<DeclarationSlot>>;
  clientTrend(query: TrendQuery): Promise<TrendResult<ClientSlot>>;
  extensionTrend(query: TrendQuery): Promise<TrendResult<ExtensionSlot>>;
  requiredTrend(query: TrendQuery): Promise<TrendResult<RequiredSlot>>;
}

export interface TrendQuery extends FilterQuery {
  stepMinutes: number;
  instance?: string | undefined;
  clientName?: string | undefined;
  /** Only for {@link TrendReader.requiredTrend}: the ids a `-32021` named. */
  extensionId?: string | undefined;
}

export interface TrendResult<Slot> {
  /** The range actually covered: widened to whole steps, aligned to the Unix epoch (UTC). */
  fromMs: number;
  toMs: number;
  stepMinutes: number;
  slots: number;
  rows: Slot[];
}

export interface DeclarationSlot {
  slot: number;
  declaration: string | null;
  requests: number;
}

export interface ClientSlot {
  slot: number;
  name: string | null;
  version: string | null;
  requests: number;
}

/** `id` null: all requests of the step (the share's denominator). */
export interface ExtensionSlot {
  slot: number;
  id: string | null;
  clientDeclared: number;
  serverAdvertised: number;
  negotiated: number;
  requests: number;
  /** `id` null: of the step's requests, those answered before any server instance existed (left out of shares). */
  serverUnknown?: number;
}

/** `id` null: requests answered `-32021` (whatever ids they named); otherwise the answers naming `id`. */
export interface RequiredSlot {
  slot: number;
  id: string | null;
  name: string | null;
  version: string | null;
  count: number;
}
