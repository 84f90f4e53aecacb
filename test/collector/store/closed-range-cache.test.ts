import { describe, expect, it } from 'vitest';
import type { CellTotal, CellTotals } from '../../../collector/model/records.js';
import { MS_PER_HOUR, MS_PER_MINUTE } from '../../../collector/model/time.js';
import type { ClosedBuckets } from '../../../collector/store/common/closed-buckets.js';
import { ClosedRangeCache } from '../../../collector/store/common/closed-range-cache.js';
import type { InstanceCellQuery } from '../../../collector/store/query/filters.js';

const HOUR0 = Date.UTC(2026, 5, 10, 0, 0) / MS_PER_HOUR;

const cell = (clientName: string, count: number): CellTotal => ({
  kind: 0,
  clientName,
  clientVersion: '1',
  clientDeclaration: 'declared',
  extensionId: null,
  clientDeclared: null,
  serverDeclared: null,
  negotiated: null,
  count,
});

/** A reader over counts per hour and client, which records every range it is asked. */
function fakeReader(counts: Map<number, CellTotal[]>) {
  const asked: [number, number][] = [];
  const read = (range: InstanceCellQuery): CellTotals => {
    asked.push([range.fromMs / MS_PER_HOUR - HOUR0, range.toMs / MS_PER_HOUR - HOUR0]);
    const cells: CellTotal[] = [];
    for (const [hour, list] of counts) if (hour * MS_PER_HOUR >= range.fromMs && hour * MS_PER_HOUR < range.toMs) cells.push(...list);
    return { fromMs: range.fromMs, toMs: range.toMs, resolution: 'hour', cells, serverUnknown: [] };
  };
  return { asked, read };
}

/** Counts per client (a read may answer one cell in several totals). */
const summed = (cells: readonly CellTotal[]) => {
  const sums = new Map<string | null, number>();
  for (const total of cells) sums.set(total.clientName, (sums.get(total.clientName) ?? 0) + total.count);
  return [...sums].map(([name, count]) => `${name}: ${count}`).sort();
};

describe('closed range cache', () => {
  const week = { fromMs: (HOUR0 - 7 * 24) * MS_PER_HOUR + 1234, toMs: (HOUR0 + 1) * MS_PER_HOUR - 5678 };

  it('reads the closed part once while its generation holds, the open part every time, and answers the sums of one whole read', async () => {
    const counts = new Map([
      [HOUR0 - 100, [cell('a', 1), cell('b', 2)]],
      [HOUR0 - 1, [cell('a', 4)]],
      [HOUR0, [cell('a', 8), cell('c', 16)]],
    ]);
    const state: ClosedBuckets = { generation: 0, openHour: HOUR0 };
    const { asked, read } = fakeReader(counts);
    const cache = new ClosedRangeCache(() => state);
    const first = await cache.read('cells', week, read);
    expect(first).toMatchObject({ fromMs: (HOUR0 - 7 * 24) * MS_PER_HOUR, toMs: (HOUR0 + 1) * MS_PER_HOUR, resolution: 'hour' });
    expect(summed(first.cells)).toEqual(['a: 13', 'b: 2', 'c: 16']);
    expect(summed(first.serverUnknown ?? [])).toEqual([]);
    expect(asked).toEqual([
      [-7 * 24, 0],
      [0, 1],
    ]);
    // Again: only the open hour is read; a count added to it shows.
    counts.set(HOUR0, [cell('a', 9), cell('c', 16)]);
    expect(summed((await cache.read('cells', week, read)).cells)).toEqual(['a: 14', 'b: 2', 'c: 16']);
    expect(asked.slice(2)).toEqual([[0, 1]]);
    // A late point into a closed hour bumps the generation: the closed part is read anew, once.
    counts.set(HOUR0 - 1, [cell('a', 4), cell('d', 32)]);
    state.generation = 1;
    expect(summed((await cache.read('cells', week, read)).cells)).toEqual(['a: 14', 'b: 2', 'c: 16', 'd: 32']);
    expect(summed((await cache.read('cells', week, read)).cells)).toEqual(['a: 14', 'b: 2', 'c: 16', 'd: 32']);
    // The open part is read beside the state (from the open hour last seen), the closed part once the state is known.
    expect(asked.slice(3)).toEqual([
      [0, 1],
      [-7 * 24, 0],
      [0, 1],
    ]);
    // The kept totals are never changed by the merge.
    expect(summed((await cache.read('cells', { ...week, toMs: HOUR0 * MS_PER_HOUR }, read)).cells)).toEqual(['a: 5', 'b: 2', 'd: 32']);
  });

  it('reads as it is asked: two days or less, nothing closed yet, a range after the open hour; other queries keep their own parts', async () => {
    const counts = new Map([[HOUR0 - 1, [cell('a', 1)]]]);
    const state: ClosedBuckets = { generation: 0, openHour: null };
    const { asked, read } = fakeReader(counts);
    const cache = new ClosedRangeCache(() => state);
    const twoDays = { fromMs: (HOUR0 - 48) * MS_PER_HOUR, toMs: HOUR0 * MS_PER_HOUR };
    const aligned = { fromMs: (HOUR0 - 7 * 24) * MS_PER_HOUR, toMs: (HOUR0 + 1) * MS_PER_HOUR };
    await cache.read('cells', twoDays, read);
    await cache.read('cells', aligned, read);
    state.openHour = HOUR0 - 7 * 24;
    await cache.read('cells', aligned, read);
    expect(asked).toEqual([
      [-48, 0],
      [-7 * 24, 1],
      [-7 * 24, 1],
    ]);
    state.openHour = HOUR0;
    await cache.read('cells', aligned, read);
    await cache.read('cells', { ...aligned, service: 'svc' }, read);
    await cache.read('instance cells', aligned, read);
    await cache.read('cells', aligned, read);
    expect(asked.slice(3)).toEqual([
      [-7 * 24, 0],
      [0, 1],
      [0, 1],
      [-7 * 24, 0],
      [0, 1],
      [-7 * 24, 0],
      [0, 1],
    ]);
  });

  it('a range ending now, an hour later: the kept part moves with it, reading only the hour it left, the hour closed since and the open one', async () => {
    const counts = new Map([
      [HOUR0 - 7 * 24, [cell('gone', 3), cell('a', 1)]],
      [HOUR0 - 7 * 24 + 1, [cell('a', 2), cell('a', 5)]],
      [HOUR0 - 1, [cell('a', 4), cell('b', 8)]],
      [HOUR0, [cell('b', 16)]],
      [HOUR0 + 1, [cell('c', 32)]],
    ]);
    const state: ClosedBuckets = { generation: 3, openHour: HOUR0 };
    const { asked, read } = fakeReader(counts);
    const cache = new ClosedRangeCache(() => state);
    const endingAt = (hour: number) => ({ fromMs: (hour - 7 * 24) * MS_PER_HOUR + 1, toMs: hour * MS_PER_HOUR + 1 });
    expect(summed((await cache.read('cells', endingAt(HOUR0), read)).cells)).toEqual(['a: 12', 'b: 24', 'gone: 3']);
    state.openHour = HOUR0 + 1;
    const later = await cache.read('cells', endingAt(HOUR0 + 1), read);
    expect(later).toMatchObject({ fromMs: (HOUR0 + 1 - 7 * 24) * MS_PER_HOUR, toMs: (HOUR0 + 2) * MS_PER_HOUR });
    // Exactly what one read of the whole range answers; the cell only the hour left held is gone, not zero.
    const whole = read({ fromMs: later.fromMs, toMs: later.toMs });
    expect(summed(later.cells)).toEqual(summed(whole.cells));
    expect(summed(later.cells)).toEqual(['a: 11', 'b: 24', 'c: 32']);
    expect(later.cells.some((total) => total.count === 0)).toBe(false);
    // The open part read from the open hour last seen is not used: the state says the open hour moved.
    expect(asked.slice(2)).toEqual([
      [0, 2],
      [-7 * 24, -7 * 24 + 1],
      [0, 1],
      [1, 2],
      [-7 * 24 + 1, 2],
    ]);
  });

  it('a range of a day at minutes keeps its closed hours and minutes: a minute later it reads the minute it left and the hour under way, and answers what one read of the range answers', async () => {
    const MINUTE0 = HOUR0 * 60;
    // Counts per minute; the store answers two days or less in whole minutes, and a range reaching back before
    // `horizon` in whole hours (as past the minute rollups).
    const counts = new Map([
      [MINUTE0 - 24 * 60 + 30, [cell('gone', 1)]],
      [MINUTE0 - 24 * 60 + 31, [cell('a', 2)]],
      [MINUTE0 - 61, [cell('a', 4)]],
      [MINUTE0 - 1, [cell('b', 8)]],
      [MINUTE0 + 5, [cell('b', 16)]],
      [MINUTE0 + 40, [cell('c', 32)]],
    ]);
    let horizon = 0;
    const asked: [number, number][] = [];
    const read = (range: InstanceCellQuery): CellTotals => {
      const hourly = range.fromMs < horizon;
      const unit = hourly ? MS_PER_HOUR : MS_PER_MINUTE;
      const fromMs = Math.floor(range.fromMs / unit) * unit;
      const toMs = Math.ceil(range.toMs / unit) * unit;
      asked.push([fromMs / MS_PER_MINUTE - MINUTE0, toMs / MS_PER_MINUTE - MINUTE0]);
      const cells: CellTotal[] = [];
      for (const [minute, list] of counts) if (minute * MS_PER_MINUTE >= fromMs && minute * MS_PER_MINUTE < toMs) cells.push(...list);
      return { fromMs, toMs, resolution: hourly ? 'hour' : 'minute', cells, serverUnknown: [] };
    };
    const state: ClosedBuckets = { generation: 0, openHour: HOUR0 };
    let stateReads = 0;
    const cache = new ClosedRangeCache(() => {
      stateReads++;
      return state;
    });
    const endingAt = (minute: number) => ({ fromMs: (minute - 24 * 60) * MS_PER_MINUTE + 1, toMs: minute * MS_PER_MINUTE + 1 });
    const first = await cache.read('cells', endingAt(MINUTE0 + 30), read);
    expect(first).toMatchObject({ fromMs: (MINUTE0 + 30 - 24 * 60) * MS_PER_MINUTE, toMs: (MINUTE0 + 31) * MS_PER_MINUTE, resolution: 'minute' });
    expect(summed(first.cells)).toEqual(['a: 6', 'b: 24', 'gone: 1']);
    expect(asked).toEqual([
      [30 - 24 * 60, 0],
      [0, 31],
    ]);
    // The same minute: only the hour under way.
    await cache.read('cells', endingAt(MINUTE0 + 30), read);
    expect(asked.slice(2)).toEqual([[0, 31]]);
    // A minute later: the minute the range left is taken away, nothing else of the closed part is read.
    const later = await cache.read('cells', endingAt(MINUTE0 + 31), read);
    expect(asked.slice(3)).toEqual([
      [0, 32],
      [30 - 24 * 60, 31 - 24 * 60],
    ]);
    expect(later).toMatchObject({ fromMs: (MINUTE0 + 31 - 24 * 60) * MS_PER_MINUTE, toMs: (MINUTE0 + 32) * MS_PER_MINUTE, resolution: 'minute' });
    expect(summed(later.cells)).toEqual(summed(read({ fromMs: later.fromMs, toMs: later.toMs }).cells));
    expect(summed(later.cells)).toEqual(['a: 6', 'b: 24']);
    // A late point into a closed minute bumps the generation: it shows in the next read.
    counts.set(MINUTE0 - 30, [cell('late', 64)]);
    state.generation = 1;
    expect(summed((await cache.read('cells', endingAt(MINUTE0 + 31), read)).cells)).toEqual(['a: 6', 'b: 24', 'late: 64']);
    // A range inside the open hour last seen is read as it is, without asking which buckets are closed.
    const reads = stateReads;
    asked.length = 0;
    expect(summed((await cache.read('cells', { fromMs: (MINUTE0 + 5) * MS_PER_MINUTE, toMs: (MINUTE0 + 20) * MS_PER_MINUTE }, read)).cells)).toEqual(['b: 16']);
    expect(asked).toEqual([[5, 20]]);
    expect(stateReads).toBe(reads);
    // A range the store answers in whole hours is read as it is, not kept.
    horizon = (MINUTE0 - 23 * 60) * MS_PER_MINUTE;
    asked.length = 0;
    const hourly = await cache.read('cells', { fromMs: (MINUTE0 - 24 * 60 + 10) * MS_PER_MINUTE, toMs: (MINUTE0 + 10) * MS_PER_MINUTE }, read);
    expect(hourly).toMatchObject({ fromMs: (MINUTE0 - 24 * 60) * MS_PER_MINUTE, resolution: 'hour' });
    expect(asked.at(-1)).toEqual([-24 * 60, 60]);
    expect(summed(hourly.cells)).toEqual(['a: 6', 'b: 24', 'c: 32', 'gone: 1', 'late: 64']);
  });

  it('reads at once of the same closed part sum it once; a read of it that fails does not fail the others, which read it themselves', async () => {
    const counts = new Map([
      [HOUR0 - 30, [cell('a', 1)]],
      [HOUR0, [cell('b', 2)]],
    ]);
    const state: ClosedBuckets = { generation: 0, openHour: HOUR0 };
    const { asked, read } = fakeReader(counts);
    // The closed part's read answers once it is let go, as a read in chunks answers some turns later.
    const gates: (() => void)[] = [];
    let failNext = false;
    const slow = async (range: InstanceCellQuery): Promise<CellTotals> => {
      if (range.toMs === HOUR0 * MS_PER_HOUR) await new Promise<void>((resolve) => gates.push(resolve));
      if (failNext && range.toMs === HOUR0 * MS_PER_HOUR) {
        failNext = false;
        throw new Error('aborted');
      }
      return read(range);
    };
    const cache = new ClosedRangeCache(() => state);
    const letGo = async (): Promise<void> => {
      for (let turn = 0; turn < 100 && gates.length === 0; turn++) await new Promise((resolve) => setImmediate(resolve));
      gates.shift()?.();
    };
    const both = Promise.all([cache.read('cells', week, slow), cache.read('cells', week, slow)]);
    await letGo();
    for (const answer of await both) expect(summed(answer.cells)).toEqual(['a: 1', 'b: 2']);
    expect(asked.filter(([, to]) => to === 0)).toEqual([[-7 * 24, 0]]);
    // Under a new generation, the first read of the part fails: the one waiting for it reads the part itself.
    state.generation = 1;
    failNext = true;
    const failing = cache.read('cells', week, slow);
    const waiting = cache.read('cells', week, slow);
    await letGo();
    await expect(failing).rejects.toThrow('aborted');
    await letGo();
    expect(summed((await waiting).cells)).toEqual(['a: 1', 'b: 2']);
    expect(asked.filter(([, to]) => to === 0)).toEqual([
      [-7 * 24, 0],
      [-7 * 24, 0],
    ]);
  });

  it('keeps a bounded number of parts and cells, the least recently used going first', async () => {
    const counts = new Map([[HOUR0 - 1, [cell('a', 1), cell('b', 1), cell('c', 1)]]]);
    const { asked, read } = fakeReader(counts);
    const cache = new ClosedRangeCache(() => ({ generation: 0, openHour: HOUR0 }), { entries: 2, cells: 5 });
    const services = ['s1', 's2', 's3'];
    for (const service of services) await cache.read('cells', { ...week, service }, read);
    // s1 went (three entries over a limit of two, and 9 cells over 5): read again; s3 was kept.
    const before = asked.length;
    await cache.read('cells', { ...week, service: 's3' }, read);
    expect(asked.length - before).toBe(1);
    await cache.read('cells', { ...week, service: 's1' }, read);
    expect(asked.length - before).toBe(3);
  });
});
