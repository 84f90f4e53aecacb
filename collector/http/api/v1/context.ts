import type { AlertStatus } from '../../../alerting/engine.js';
import type { RejectedPoints } from '../../../model/rejections.js';
import type { AlertStateStore, RollupReader } from '../../../store/store.js';

/** What every API route needs: the store's read side and the clock that "now" comes from. */
export interface ApiContext {
  reader: RollupReader;
  clock: () => number;
  /** An instance not heard from for this long is stale. */
  staleAfterMs: number;
  /** An instance not heard from for this long is not listed. */
  instanceTtlMs: number;
  /** Ended sessions and instances stay listed this long when asked for (`ended=true`). */
  endedTtlMs: number;
  /** Alert states and how the rules are evaluated; absent: no rule engine runs, and `/alerts` is not served. */
  alerts?: { states: Pick<AlertStateStore, 'alerts'>; status(): AlertStatus } | undefined;
  /** The trace link template (http/trace-link.ts); absent: examples carry no trace link. */
  traceUrl?: string | undefined;
  /** Points refused one by one since start (ops/rejections.ts); absent: `/rejections` is not served. */
  rejections?: { summary(): { sinceMs: number; entries: readonly RejectedPoints[] } } | undefined;
}
