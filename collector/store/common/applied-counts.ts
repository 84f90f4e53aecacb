import type { SeriesDims } from '../../model/batches.js';
import type { AppliedCount } from '../../model/records.js';
import { MAX_STORED_COUNT } from './columns.js';

/**
 * What one apply added, per stored series, as the writer learns it: only the increments that were new (a retry's
 * rows are already logged and add nothing) and labelled with the series as stored, after the store's limits.
 */
export class AppliedCounts {
  private readonly bySeries = new Map<number, AppliedCount>();

  add(seriesId: number, service: string | null, dims: Readonly<SeriesDims>, value: number): void {
    const entry = this.bySeries.get(seriesId);
    if (entry === undefined) this.bySeries.set(seriesId, { service, dims, count: value });
    else entry.count = Math.min(entry.count + value, MAX_STORED_COUNT);
  }

  list(): AppliedCount[] {
    return [...this.bySeries.values()];
  }
}
