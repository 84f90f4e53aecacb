import { type FleetInstance, buildFleet } from '../../analysis/fleet.js';
import { type ClientGrouping, type MatrixView, buildMatrix } from '../../analysis/matrix.js';
import type { CellTotal, InstanceRecord } from '../../model/records.js';
import { MS_PER_HOUR, MS_PER_MINUTE } from '../../model/time.js';
import type { RollupReader } from '../../store/store.js';
import type { RequiredSlot } from '../../store/query/trends.js';

/** What the rules read: the store's read side, nothing else. */
export type AlertDataSource = Pick<RollupReader, 'instances' | 'cellTotals' | 'requiredTrend'>;

export interface SnapshotOptions {
  now: number;
  /** An instance not heard from for this long is stale (as in the fleet view). */
  staleAfterMs: number;
  /** Instances not heard from for this long are not read at all. */
  instanceTtlMs: number;
}

/** Whole minutes: every window boundary is one, so that a window ends where the next begins. */
export const floorMinute = (ms: number): number => Math.floor(ms / MS_PER_MINUTE) * MS_PER_MINUTE;

/** A range of whole minutes, [fromMs, toMs). */
export interface Window {
  fromMs: number;
  toMs: number;
}

/**
 * One evaluation's reads, each made once however many rules ask for it (a cycle sees one state of the data).
 * The store widens a range to whole buckets (hours, over long ranges); a window here never reaches past its
 * end, so the part of a long range after its last whole hour is read by the minute.
 */
export class Snapshot {
  private readonly memo = new Map<string, Promise<unknown>>();

  constructor(
    private readonly source: AlertDataSource,
    readonly options: SnapshotOptions,
  ) {}

  get now(): number {
    return this.options.now;
  }

  /**
   * The last `durationMs` of whole, elapsed minutes: it ends where the current minute begins. The minute under way
   * is not a minute yet (counting it as one made a rate fall, and its alert resolve, at the start of every minute).
   */
  window(durationMs: number): Window {
    const toMs = floorMinute(this.now);
    return { fromMs: toMs - Math.max(1, Math.ceil(durationMs / MS_PER_MINUTE)) * MS_PER_MINUTE, toMs };
  }

  /**
   * Each read after a turn of the event loop: the SQLite store answers synchronously, and a cycle of many reads
   * must not hold up ingest for its whole length (exports are taken between reads).
   */
  private once<T>(key: string, read: () => Promise<T>): Promise<T> {
    let entry = this.memo.get(key) as Promise<T> | undefined;
    if (entry === undefined) this.memo.set(key, (entry = new Promise<void>((resolve) => setImmediate(resolve)).then(read)));
    return entry;
  }

  instances(): Promise<InstanceRecord[]> {
    return this.once('instances', () => this.source.instances({ seenSinceMs: this.now - this.options.instanceTtlMs }));
  }

  fleet(): Promise<FleetInstance[]> {
    return this.once('fleet', async () => buildFleet(await this.instances(), this.now, this.options.staleAfterMs));
  }

  /** Every service an instance reported for. */
  async services(): Promise<string[]> {
    const names = new Set<string>();
    for (const record of await this.instances()) if (record.service !== null) names.add(record.service);
    return [...names].sort();
  }

  /** Matrix cells over [fromMs, toMs) (minute-aligned), of one service or all. */
  async cells(service: string | undefined, fromMs: number, toMs: number): Promise<CellTotal[]> {
    return (await this.cellParts(service, fromMs, toMs)).cells;
  }

  /**
   * The matrix over [fromMs, toMs) as the API builds it (analysis/matrix.ts: the same states, shares and `-32021`
   * counts), so that an alert's figure is the figure of the view it links to.
   */
  matrix(service: string | undefined, fromMs: number, toMs: number, group: ClientGrouping): Promise<MatrixView> {
    return this.once(`matrix ${JSON.stringify([service ?? null, fromMs, toMs, group])}`, async () => {
      const [parts, required] = await Promise.all([this.cellParts(service, fromMs, toMs), this.required(service, fromMs, toMs)]);
      return buildMatrix(parts.cells, group, undefined, parts.serverUnknown, required);
    });
  }

  /** The cells and the part of them answered before any server instance existed. */
  private cellParts(service: string | undefined, fromMs: number, toMs: number): Promise<{ cells: CellTotal[]; serverUnknown: CellTotal[] }> {
    return this.once(`cells ${JSON.stringify([service ?? null, fromMs, toMs])}`, async () => {
      const whole = await this.source.cellTotals({ fromMs, toMs, service });
      if (whole.toMs <= toMs) return { cells: whole.cells, serverUnknown: whole.serverUnknown ?? [] };
      // Answered in whole hours past `toMs`: the whole hours before it, then the rest by the minute.
      const hour = Math.floor(toMs / MS_PER_HOUR) * MS_PER_HOUR;
      const hours = hour > fromMs ? await this.source.cellTotals({ fromMs, toMs: hour, service }) : undefined;
      const rest = await this.source.cellTotals({ fromMs: Math.max(fromMs, hour), toMs, service });
      return { cells: [...(hours?.cells ?? []), ...rest.cells], serverUnknown: [...(hours?.serverUnknown ?? []), ...(rest.serverUnknown ?? [])] };
    });
  }

  /** `-32021` answers per named id and client over [fromMs, toMs), of one service or all. */
  required(service: string | undefined, fromMs: number, toMs: number): Promise<RequiredSlot[]> {
    return this.once(`required ${JSON.stringify([service ?? null, fromMs, toMs])}`, async () => {
      // Minute steps: the range widens to whole steps, and minute-aligned bounds are whole minutes already.
      const result = await this.source.requiredTrend({ fromMs, toMs, service, stepMinutes: 1 });
      return result.rows;
    });
  }
}
