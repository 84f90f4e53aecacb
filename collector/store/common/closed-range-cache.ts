import type { CellTotal, InstanceCellTotal, Resolution } from '../../model/records.js';
import { MS_PER_HOUR, MS_PER_MINUTE } from '../../model/time.js';
import { HOURLY_ABOVE_MS, type InstanceCellQuery } from '../query/filters.js';
import type { ClosedBuckets } from './closed-buckets.js';

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

/** About 190 bytes a kept total (its identity key included): some 50 MB at most. */
const DEFAULT_LIMITS: ClosedRangeLimits = { entries: 16, cells: 250_000 };

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

/**
 * A cell total's identity: the stored cell's id where the read gives it (every read of one query gives it or none
 * does), otherwise every field but its count (JSON: a client named "null" is not the null client). The id spares a
 * long range's first read a key of every field for each of its cells (tens of thousands).
 */
const identity = (cell: CellTotal): string | number =>
  cell.cellId ?? JSON.stringify(IDENTITY.map((field) => (cell as unknown as Record<string, unknown>)[field] ?? null));

/** A kept list of totals, one per identity, with where each is. */
interface KeptList {
  cells: readonly CellTotal[];
  at: Map<string | number, number>;
}

/** `cells` with the totals of one identity summed into one (a read from the series may give several): what is taken away later is then taken from the whole. */
const kept = (cells: readonly CellTotal[]): KeptList => {
  const at = new Map<string | number, number>();
  const list: CellTotal[] = [];
  for (const cell of cells) {
    const key = identity(cell);
    const index = at.get(key);
    if (index === undefined) {
      at.set(key, list.length);
      list.push(cell);
    } else list[index] = { ...(list[index] as CellTotal), count: (list[index] as CellTotal).count + cell.count };
  }
  return { cells: list, at };
};

/**
 * `kept` with `counts` added (`sign` 1) or taken away (−1): a total of the same identity becomes a new object (the
 * kept ones are never changed), the others follow (added ones only); totals that come to zero are left out, as a
 * read leaves them out. Sums exact.
 */
function merged<T extends CellTotal>(kept: KeptList, counts: readonly T[] | undefined, sign: 1 | -1 = 1): T[] {
  const cells = [...kept.cells] as T[];
  let zeros = false;
  for (const cell of counts ?? []) {
    const index = kept.at.get(identity(cell));
    if (index === undefined) {
      if (sign === 1) cells.push(cell);
      continue;
    }
    const count = (cells[index] as T).count + sign * cell.count;
    cells[index] = { ...(cells[index] as T), count };
    zeros ||= count <= 0;
  }
  return zeros ? cells.filter((cell) => cell.count > 0) : cells;
}

interface Entry {
  generation: number;
  /** The closed part kept: [fromMs, closedToMs), whole hours. */
  fromMs: number;
  closedToMs: number;
  cells: KeptList;
  serverUnknown: KeptList | undefined;
  size: number;
}

/** A closed part being read: its bounds, the generation it is read under, and the entry it becomes. */
interface Reading {
  generation: number;
  fromMs: number;
  closedToMs: number;
  /** The buckets the part is read in: a part the store answers in others is not kept (undefined). */
  resolution: Resolution;
  entry: Promise<Entry | undefined>;
}

const entryOf = (
  generation: number,
  fromMs: number,
  closedToMs: number,
  cells: readonly CellTotal[],
  serverUnknown: readonly CellTotal[] | undefined,
): Entry => {
  const entry = { generation, fromMs, closedToMs, cells: kept(cells), serverUnknown: serverUnknown === undefined ? undefined : kept(serverUnknown) };
  return { ...entry, size: entry.cells.cells.length + (entry.serverUnknown?.cells.length ?? 0) };
};

/**
 * Cell reads that reuse what has not changed. A range is split at the open hour (closed-buckets.ts): the closed
 * part's totals are kept, per query, range length and resolution, and answered again while the store's
 * closed-bucket generation is the one they were read under; the open part is read every time and added. When the
 * range has moved on (a range ending now, a minute or an hour later) the kept part is moved with it: the buckets it
 * no longer covers are read and taken away, the hours closed since are read and added. A range of two days or less
 * is read in whole minutes (its closed hours kept as well: a 24-hour read then reads the hour under way rather than
 * each cell's 24 hours), a longer one in whole hours; a part the store answers in other buckets (a short range
 * reaching back past the minute rollups, answered in whole hours) is not kept, and the range is read as it is.
 * Bounded: a few entries, and a cap on the totals kept over all of them (least recently used go first). Same buckets
 * and sums as one read of the whole range: the parts split it at an hour, and the levels hold the same counts
 * however a range is split.
 */
export class ClosedRangeCache {
  private readonly entries = new Map<string, Entry>();
  /** Closed parts being read, per key: a read of the same part meanwhile waits for it rather than summing again. */
  private readonly reading = new Map<string, Reading>();
  private size = 0;
  /** The open hour the last read found: where the next read's open part likely starts. */
  private lastOpenHour: number | null | undefined;

  constructor(
    private readonly closedBuckets: () => Answer<ClosedBuckets>,
    private readonly limits: ClosedRangeLimits = DEFAULT_LIMITS,
  ) {}

  /** `read` answers any range of `query`; `what` names the read (its answers are kept apart from other reads'). */
  async read<T extends RangeTotals<CellTotal>>(what: string, query: InstanceCellQuery, read: (range: InstanceCellQuery) => Answer<T>): Promise<T> {
    // Widened to whole hours as the store's bucket plan widens a range this long, to whole minutes otherwise.
    const resolution: Resolution = query.toMs - query.fromMs > HOURLY_ABOVE_MS ? 'hour' : 'minute';
    const unit = resolution === 'hour' ? MS_PER_HOUR : MS_PER_MINUTE;
    const fromMs = Math.floor(query.fromMs / unit) * unit;
    const toMs = Math.max(fromMs + unit, Math.ceil(query.toMs / unit) * unit);
    const closedTo = (openHour: number | null): number => (openHour === null ? fromMs : Math.min(openHour * MS_PER_HOUR, toMs));
    const readRange = (from: number, to: number): Answer<T> => read({ ...query, fromMs: from, toMs: to });
    // The open part is read beside the state, from the open hour last seen (it moves once an hour): where the reads
    // are round trips, one fewer. Read again when the state says otherwise; what it read then is not used.
    const likelyClosedToMs = this.lastOpenHour === undefined ? undefined : closedTo(this.lastOpenHour);
    // A range inside the open hour last seen (the last quarter of an hour, say) is read as it is, without the state:
    // nothing of it was closed then, and a read of the whole range is exact whatever has closed since. One reaching
    // past that hour asks for the state, so the open hour seen moves on with the clock.
    const lastOpenHour = this.lastOpenHour ?? undefined;
    if (lastOpenHour !== undefined && fromMs >= lastOpenHour * MS_PER_HOUR && toMs <= (lastOpenHour + 1) * MS_PER_HOUR) return read(query);
    const likelyOpen =
      likelyClosedToMs !== undefined && likelyClosedToMs > fromMs && likelyClosedToMs < toMs ? Promise.resolve(readRange(likelyClosedToMs, toMs)) : undefined;
    likelyOpen?.catch(() => undefined);
    const state = await this.closedBuckets();
    this.lastOpenHour = state.openHour;
    const closedToMs = closedTo(state.openHour);
    if (closedToMs <= fromMs) return read(query);
    const key = JSON.stringify([
      what,
      query.service,
      query.instance,
      query.clientName,
      query.clients,
      query.requestsOnly,
      query.instanceRefs,
      query.perService,
      resolution,
      Math.round((toMs - fromMs) / unit),
    ]);
    let entry = this.entries.get(key);
    if (entry?.generation !== state.generation || entry.fromMs > fromMs || entry.closedToMs > closedToMs || entry.closedToMs <= fromMs) {
      entry = await this.closedPart(key, { generation: state.generation, fromMs, closedToMs, resolution }, () => readRange(fromMs, closedToMs));
      // A short range the store answers in whole hours (one reaching back past the minute rollups) is read as it is.
      if (entry === undefined) return read(query);
    } else if (entry.fromMs < fromMs || entry.closedToMs < closedToMs) {
      // Moved on: both edges read in the range's buckets, closed, under the generation the kept part was read under.
      const gone = entry.fromMs < fromMs ? await readRange(entry.fromMs, fromMs) : undefined;
      const closed = entry.closedToMs < closedToMs ? await readRange(entry.closedToMs, closedToMs) : undefined;
      if ((gone !== undefined && gone.resolution !== resolution) || (closed !== undefined && closed.resolution !== resolution)) return read(query);
      const cells = merged(kept(merged(entry.cells, gone?.cells, -1)), closed?.cells);
      const serverUnknown =
        entry.serverUnknown === undefined ? undefined : merged(kept(merged(entry.serverUnknown, gone?.serverUnknown, -1)), closed?.serverUnknown);
      entry = entryOf(state.generation, fromMs, closedToMs, cells, serverUnknown);
    }
    this.keep(key, entry);
    const open =
      closedToMs >= toMs ? undefined : closedToMs === likelyClosedToMs && likelyOpen !== undefined ? await likelyOpen : await readRange(closedToMs, toMs);
    const answer: RangeTotals = { fromMs, toMs, resolution, cells: merged(entry.cells, open?.cells) };
    if (entry.serverUnknown !== undefined) answer.serverUnknown = merged(entry.serverUnknown, open?.serverUnknown);
    return answer as T;
  }

  /**
   * The closed part [fromMs, closedToMs) read under `generation`: the one another read of `key` is reading now if it
   * is that part (the same buckets under the same generation: what this read would sum), else read here. Another
   * read's failure (its request aborted, say) is not this one's: it then reads the part itself.
   */
  private async closedPart(key: string, part: Omit<Reading, 'entry'>, read: () => Answer<RangeTotals>): Promise<Entry | undefined> {
    const under = this.reading.get(key);
    if (
      under !== undefined &&
      under.generation === part.generation &&
      under.fromMs === part.fromMs &&
      under.closedToMs === part.closedToMs &&
      under.resolution === part.resolution
    ) {
      const shared = await under.entry.catch(() => undefined);
      if (shared !== undefined) return shared;
    }
    const reading: Reading = {
      ...part,
      entry: Promise.resolve(read()).then((totals) =>
        totals.resolution === part.resolution ? entryOf(part.generation, part.fromMs, part.closedToMs, totals.cells, totals.serverUnknown) : undefined,
      ),
    };
    this.reading.set(key, reading);
    try {
      return await reading.entry;
    } finally {
      if (this.reading.get(key) === reading) this.reading.delete(key);
    }
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
