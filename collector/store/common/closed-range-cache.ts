import type { CellTotal, InstanceCellTotal, Resolution } from '../../model/records.js';
import { MS_PER_HOUR } from '../../model/time.js';
import type { InstanceCellQuery } from '../query/filters.js';
import type { ClosedBuckets } from './closed-buckets.js';
import { HOURLY_ABOVE_MS } from './windows.js';

type Answer<T> = T | Promise<T>;

/** What a cell read answers (CellTotals, InstanceCellTotals): the range summed and a total per cell. */
export interface RangeTotals<T extends CellTotal = CellTotal> {
  fromMs: number;
  toMs: number;
  resolution: Resolution;
  cells: T[];
  serverUnknown?: CellTotal[];
}

/** How much is kept: closed parts, and cell totals over all of them (a part larger than that is not kept). */
export interface ClosedRangeLimits {
  entries: number;
  cells: number;
}

const DEFAULT_LIMITS: ClosedRangeLimits = { entries: 16, cells: 500_000 };

/** Every field a cell total (or an instance's) may have but its count. */
const IDENTITY = [
  'kind',
  'clientName',
  'clientVersion',
  'clientDeclaration',
  'extensionId',
  'clientDeclared',
  'serverDeclared',
  'negotiated',
  'service',
  'instanceId',
  'serverDeclaration',
  'required',
] as const satisfies readonly (keyof InstanceCellTotal)[];

/** A cell total's identity: every field but its count (JSON: a client named "null" is not the null client). */
const identity = (cell: CellTotal): string => JSON.stringify(IDENTITY.map((field) => (cell as unknown as Record<string, unknown>)[field] ?? null));

/** A kept list of totals, with where each identity first occurs. */
interface KeptList {
  cells: readonly CellTotal[];
  at: Map<string, number>;
}

const kept = (cells: readonly CellTotal[]): KeptList => {
  const at = new Map<string, number>();
  cells.forEach((cell, index) => {
    const key = identity(cell);
    if (!at.has(key)) at.set(key, index);
  });
  return { cells, at };
};

/**
 * The closed part's totals with the open part's added: a total of the same identity gets the open count added (a
 * new object: the kept ones are never changed), the others follow. Sums exact; a read from the series (which may
 * give several totals of one identity) may come back with fewer, larger totals.
 */
function merged<T extends CellTotal>(closed: KeptList, open: readonly T[] | undefined): T[] {
  const cells = [...closed.cells] as T[];
  for (const cell of open ?? []) {
    const index = closed.at.get(identity(cell));
    if (index === undefined) cells.push(cell);
    else cells[index] = { ...(cells[index] as T), count: (cells[index] as T).count + cell.count };
  }
  return cells;
}

interface Entry {
  generation: number;
  totals: RangeTotals;
  cells: KeptList;
  serverUnknown: KeptList | undefined;
  size: number;
}

/**
 * Long-range cell reads that reuse what has not changed. A range read in whole hours (longer than two days) is split
 * at the open hour (closed-buckets.ts): the closed part's totals are kept, keyed by the query and its closed bounds,
 * and answered again while the store's closed-bucket generation is the one they were read under; the open part is
 * read every time and added. Bounded: a few entries, and a cap on the totals kept over all of them (least recently
 * used go first). Same buckets and sums as one read of the whole range: the closed part ends on an hour, and the
 * levels hold the same counts however a range is split.
 */
export class ClosedRangeCache {
  private readonly entries = new Map<string, Entry>();
  private size = 0;

  constructor(
    private readonly closedBuckets: () => Answer<ClosedBuckets>,
    private readonly limits: ClosedRangeLimits = DEFAULT_LIMITS,
  ) {}

  /** `read` answers any range of `query`; `what` names the read (its answers are kept apart from other reads'). */
  async read<T extends RangeTotals<CellTotal>>(what: string, query: InstanceCellQuery, read: (range: InstanceCellQuery) => Answer<T>): Promise<T> {
    if (query.toMs - query.fromMs <= HOURLY_ABOVE_MS) return read(query);
    const state = await this.closedBuckets();
    // Widened to whole hours as the store's bucket plan widens a range this long.
    const fromMs = Math.floor(query.fromMs / MS_PER_HOUR) * MS_PER_HOUR;
    const toMs = Math.ceil(query.toMs / MS_PER_HOUR) * MS_PER_HOUR;
    const closedToMs = state.openHour === null ? fromMs : Math.min(state.openHour * MS_PER_HOUR, toMs);
    if (closedToMs <= fromMs) return read(query);
    const key = JSON.stringify([what, query.service, query.instance, query.clientName, query.clients, fromMs, closedToMs]);
    let entry = this.entries.get(key);
    if (entry === undefined || entry.generation !== state.generation) {
      const totals: RangeTotals = await read({ ...query, fromMs, toMs: closedToMs });
      entry = {
        generation: state.generation,
        totals,
        cells: kept(totals.cells),
        serverUnknown: totals.serverUnknown === undefined ? undefined : kept(totals.serverUnknown),
        size: totals.cells.length + (totals.serverUnknown?.length ?? 0),
      };
    }
    this.keep(key, entry);
    const open = closedToMs < toMs ? await read({ ...query, fromMs: closedToMs, toMs }) : undefined;
    const answer: RangeTotals = { fromMs, toMs, resolution: 'hour', cells: merged(entry.cells, open?.cells) };
    if (entry.serverUnknown !== undefined) answer.serverUnknown = merged(entry.serverUnknown, open?.serverUnknown);
    return answer as T;
  }

  /** Kept as the most recently used, within the limits. */
  private keep(key: string, entry: Entry): void {
    const previous = this.entries.get(key);
    if (previous !== undefined) {
      this.entries.delete(key);
      this.size -= previous.size;
    }
    if (entry.size > this.limits.cells) return;
    this.entries.set(key, entry);
    this.size += entry.size;
    for (const [oldest, { size }] of this.entries) {
      if (this.entries.size <= this.limits.entries && this.size <= this.limits.cells) break;
      this.entries.delete(oldest);
      this.size -= size;
    }
  }
}
