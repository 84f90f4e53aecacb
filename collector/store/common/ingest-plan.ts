import { type CounterPoint, type SeriesDims, SeriesKind, Temporality } from '../../model/batches.js';
import { type ApplyResult, MAX_COUNT_PER_STREAM_MINUTE } from '../../model/records.js';
import { addRejected } from '../../model/rejections.js';
import { NANOS_PER_MINUTE } from '../../model/time.js';
import { AppliedCounts } from './applied-counts.js';
import { CELL_COLUMNS, EXTENSION_INSTANCE_CELL_COLUMNS, INSTANCE_CELL_TABLE_COLUMNS, REQUEST_INSTANCE_CELL_COLUMNS, SERIES_COLUMNS, bound } from './columns.js';
import { type CumulativeState, convertCumulative } from './cumulative-rule.js';

/**
 * The ingest rules, once for every store: what one export writes, decided from the export and the state a dialect
 * loaded for its keys (the streams its points belong to, the cumulative state of their start times). A dialect
 * loads that state, writes the rows planned here and folds them; it decides nothing itself. Nothing here reads or
 * writes a database.
 */

/** The `streams.key_version` of keys stores make now (schema 1 keyed streams by attribute position, see stream-key-v1.ts). */
export const KEY_VERSION = 2;

/** A zero delta changes nothing, so it needs neither a stream nor a log row; every other point needs its stream. */
export function needsStream(point: CounterPoint): boolean {
  return point.temporality !== Temporality.Delta || point.value !== 0;
}

/** A stream as stored: its ids, its series' cells, and the series' dimensions after the store's limits. */
export interface StreamRef {
  streamId: number;
  seriesId: number;
  cellId: number;
  allCellId: number;
  /** As stored (after the dimension limit): what applied counts are labelled with. */
  dims: Readonly<SeriesDims>;
}

/** A point with its stored stream and the service it is counted under (as stored, after the instance cap). */
export interface PlannedPoint {
  point: CounterPoint;
  stream: StreamRef;
  service: string | null;
}

/** One increment for `point_log`: its identity (end, stream, start), which is unique there, and where the fold adds it. */
export interface LogRow {
  endNs: bigint;
  streamId: number;
  startNs: bigint;
  minute: number;
  seriesId: number;
  cellId: number;
  allCellId: number;
  value: number;
}

/** A cumulative state row to write: created when `created`, otherwise moved forward. */
export interface StateWrite {
  streamId: number;
  startNs: bigint;
  state: CumulativeState;
  created: boolean;
}

interface StartEntry<V> {
  startNs: bigint;
  value: V;
  /** Another start time of the same stream (rare: a sender restarted within the batch). */
  next: StartEntry<V> | undefined;
}

/**
 * Values by stream and sender start time: the key of a cumulative state row. By stream id, then a short chain of
 * start times (nearly always one): no key text and no map built per stream.
 */
export class StreamStarts<V> {
  private readonly byStream = new Map<number, StartEntry<V>>();

  get(streamId: number, startNs: bigint): V | undefined {
    for (let entry = this.byStream.get(streamId); entry !== undefined; entry = entry.next) if (entry.startNs === startNs) return entry.value;
    return undefined;
  }

  has(streamId: number, startNs: bigint): boolean {
    for (let entry = this.byStream.get(streamId); entry !== undefined; entry = entry.next) if (entry.startNs === startNs) return true;
    return false;
  }

  /** Adds a value for a key not set yet. */
  add(streamId: number, startNs: bigint, value: V): void {
    this.byStream.set(streamId, { startNs, value, next: this.byStream.get(streamId) });
  }

  *values(): Generator<V> {
    for (let entry of this.byStream.values()) for (; entry !== undefined; entry = entry.next as StartEntry<V>) yield entry.value;
  }
}

/** What one group of points writes: the log rows (in point order), the cumulative states that changed. */
export interface PointsPlan {
  log: LogRow[];
  /** How many of `log` are delta points: a retried delta is told by its row already being logged. */
  deltaRows: number;
  states: StateWrite[];
}

/**
 * One apply, planned group by group: {@link points} says what a group of points writes, {@link logged} and
 * {@link added} take what the log took, and {@link result} is the apply's answer (applied, duplicates, rejections,
 * the counts added per stored series).
 */
export class IngestPlan {
  private readonly tally: ApplyResult = { applied: 0, duplicates: 0, counts: [] };
  private readonly counts = new AppliedCounts();
  /** The service and stored dimensions of each series rows were planned for (to label what the log takes). */
  private readonly labels = new Map<number, PlannedPoint>();

  /**
   * `states`: the stored cumulative state of every (stream, start time) of the group's cumulative points; one
   * without has none yet.
   */
  points(entries: readonly PlannedPoint[], states: Pick<StreamStarts<CumulativeState>, 'get' | 'has'>): PointsPlan {
    const log: LogRow[] = [];
    let deltaRows = 0;
    const changed = new StreamStarts<StateWrite>();
    const writes: StateWrite[] = [];
    // An export's points nearly all carry one time: its minute is divided out once per time seen, not per point.
    let minuteNs: bigint | undefined;
    let minute = 0;
    const minuteOf = (timeNs: bigint): number => {
      if (timeNs !== minuteNs) {
        minuteNs = timeNs;
        minute = Number(timeNs / NANOS_PER_MINUTE);
      }
      return minute;
    };
    for (const entry of entries) {
      const { point, stream } = entry;
      if (point.temporality === Temporality.Delta) {
        log.push(logRow(point, stream, point.value, minuteOf(point.timeNs)));
        this.labels.set(stream.seriesId, entry);
        deltaRows++;
        continue;
      }
      const write = changed.get(stream.streamId, point.startNs);
      const converted = convertCumulative(write?.state ?? states.get(stream.streamId, point.startNs), point);
      if (converted === undefined) {
        // A retry, or a point out of order that the newer total already holds.
        this.tally.duplicates++;
        continue;
      }
      if (write !== undefined) write.state = converted.state;
      else {
        const created = { streamId: stream.streamId, startNs: point.startNs, state: converted.state, created: !states.has(stream.streamId, point.startNs) };
        changed.add(stream.streamId, point.startNs, created);
        writes.push(created);
      }
      if (converted.increment > MAX_COUNT_PER_STREAM_MINUTE) {
        // More than one stream can add to a minute: the total becomes the stream's baseline, nothing is counted.
        addRejected((this.tally.rejections ??= []), 'count_too_large', entry.service);
        continue;
      }
      this.tally.applied++;
      if (converted.increment > 0) {
        // Its identity is unique too (the state only moves forward), so it cannot collide in the log.
        log.push(logRow(point, stream, converted.increment, minuteOf(point.timeNs)));
        this.labels.set(stream.seriesId, entry);
      }
    }
    return { log, deltaRows, states: writes };
  }

  /** The log took `inserted` of the plan's rows: every cumulative row (they are new), and the deltas not logged before. */
  logged(plan: PointsPlan, inserted: number): void {
    const deltaInserted = inserted - (plan.log.length - plan.deltaRows);
    this.tally.applied += deltaInserted;
    this.tally.duplicates += plan.deltaRows - deltaInserted;
  }

  /** One row the log took: its increment is what this apply added to its series. */
  added(seriesId: number, value: number): void {
    const entry = this.labels.get(seriesId) as PlannedPoint;
    this.counts.add(seriesId, entry.service, entry.stream.dims, value);
  }

  result(): ApplyResult {
    this.tally.counts = this.counts.list();
    return this.tally;
  }
}

function logRow(point: CounterPoint, stream: StreamRef, value: number, minute: number): LogRow {
  return {
    endNs: point.timeNs,
    streamId: stream.streamId,
    startNs: point.startNs,
    minute,
    seriesId: stream.seriesId,
    cellId: stream.cellId,
    allCellId: stream.allCellId,
    value,
  };
}

/** A new cell's dimension values, in {@link CELL_COLUMNS} order: an extension cell does not keep the request's declaration state. */
export function cellValues(dims: Readonly<SeriesDims>): (string | number | null)[] {
  return CELL_COLUMNS.map((column) => (dims.kind === SeriesKind.Extension && column.key === 'clientDeclaration' ? null : bound(column, dims)));
}

/** A new instance cell's dimension values, in {@link INSTANCE_CELL_TABLE_COLUMNS} order: those its kind does not keep are null. */
export function instanceCellValues(dims: Readonly<SeriesDims>): (string | number | null)[] {
  const kept = dims.kind === SeriesKind.Requests ? REQUEST_INSTANCE_CELL_COLUMNS : EXTENSION_INSTANCE_CELL_COLUMNS;
  return INSTANCE_CELL_TABLE_COLUMNS.map((column) => (kept.includes(column) ? bound(column, dims) : null));
}

/** A new series' dimension values, in {@link SERIES_COLUMNS} order. */
export function seriesValues(dims: Readonly<SeriesDims>): (string | number | null)[] {
  return SERIES_COLUMNS.map((column) => bound(column, dims));
}
