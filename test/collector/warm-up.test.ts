import { describe, expect, it } from 'vitest';
import type { CellTotals } from '../../collector/model/records.js';
import type { CellQuery } from '../../collector/store/query/filters.js';
import { WARM_RANGE_MS, warmUp } from '../../collector/warm-up.js';

describe('warm-up', () => {
  it('reads the last 7 days of all services once, with the signal it is given, and resolves with the seconds it took', async () => {
    const asked: CellQuery[] = [];
    const reader = {
      cellTotals: async (query: CellQuery): Promise<CellTotals> => {
        asked.push(query);
        return { fromMs: query.fromMs, toMs: query.toMs, resolution: 'hour', cells: [] };
      },
    };
    const signal = new AbortController().signal;
    const seconds = await warmUp(
      reader,
      () => 1_000_000_000_000,
      signal,
      (error) => {
        throw error;
      },
    );
    expect(seconds).toBeGreaterThanOrEqual(0);
    expect(WARM_RANGE_MS).toBe(7 * 24 * 3_600_000);
    expect(asked).toEqual([{ fromMs: 1_000_000_000_000 - WARM_RANGE_MS, toMs: 1_000_000_000_000, signal }]);
  });

  it('a read that stops (the collector shutting down) or fails resolves undefined, never rejects; only the failure is reported', async () => {
    const reported: unknown[] = [];
    const stopping = new AbortController();
    const stopped = warmUp(
      {
        cellTotals: async (query) => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          query.signal?.throwIfAborted();
          throw new Error('not reached');
        },
      },
      Date.now,
      stopping.signal,
      (error) => reported.push(error),
    );
    stopping.abort();
    await expect(stopped).resolves.toBeUndefined();
    expect(reported).toEqual([]);
    await expect(
      warmUp({ cellTotals: () => Promise.reject(new Error('database is closed')) }, Date.now, new AbortController().signal, (error) => reported.push(error)),
    ).resolves.toBeUndefined();
    expect(reported).toEqual([new Error('database is closed')]);
  });
});
