import { MS_PER_WEEK } from './model/time.js';
import type { RollupReader } from './store/store.js';

/**
 * The longest range the dashboard offers, the last 7 days: the one range whose first read sums every cell over every
 * closed hour (the store keeps that sum in memory, store/common/closed-range-cache.ts), seconds on a large fleet.
 */
export const WARM_RANGE_MS = MS_PER_WEEK;

/**
 * Reads the last 7 days of all services once, so that the closed part of that range is kept before anyone asks:
 * the first page opened after a restart then reads only the open hour, not the week. Run once the retention pass at
 * start is over (it may drop buckets, which changes what is kept). A read like any other, in chunks with turns of the
 * event loop between them (ingest and `/healthz` are served in between), and one that a request for the same range
 * made meanwhile waits for rather than summing the week again. Nothing is answered from it that a read would not
 * answer: a kept part is used only while no closed bucket has changed since it was read. Resolves with the seconds it
 * took, or undefined when it stopped (`signal`, the collector shutting down) or failed: the first read then sums the
 * week itself, as it would have. A failure is handed to `failed` (the operator hears of it); a stop is not one.
 */
export async function warmUp(
  reader: Pick<RollupReader, 'cellTotals'>,
  clock: () => number,
  signal: AbortSignal,
  failed: (error: unknown) => void,
): Promise<number | undefined> {
  const started = performance.now();
  const now = clock();
  try {
    await reader.cellTotals({ fromMs: now - WARM_RANGE_MS, toMs: now, signal });
    return (performance.now() - started) / 1000;
  } catch (error) {
    if (!signal.aborted) failed(error);
    return undefined;
  }
}
