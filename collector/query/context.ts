import type { Store } from '../store/store.js';

/** What every query route needs: the store (read side only) and the clock that "now" comes from. */
export interface QueryContext {
  store: Store;
  clock: () => number;
  staleAfterMs: number;
  /** How far ahead of the clock ingest accepts points: where a range without `to` ends. */
  openEndMs: number;
}
