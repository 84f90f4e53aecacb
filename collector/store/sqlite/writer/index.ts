import type Database from 'better-sqlite3';
import type { CounterPoint, MetricsBatch, ResourceBatch, ResourceIdentity, SeriesDims } from '../../../model/batches.js';
import type { ApplyResult } from '../../../model/records.js';
import { planAdvertisements } from '../../common/advertisement-plan.js';
import {
  CELL_COLUMNS,
  INSTANCE_CELL_TABLE_COLUMNS,
  INSTANCE_UPSERT_COLUMNS,
  SERIES_COLUMNS,
  instanceValues,
  seriesDimsSql,
  storedDims,
  storedInstanceCellDims,
} from '../../common/columns.js';
import { endingChanged, nextEnding } from '../../common/ending-rule.js';
import { CellScope, cellKey, identityHash, instanceCellKey, instanceKey, seriesKey, streamKey } from '../../common/identity.js';
import {
  IngestPlan,
  KEY_VERSION,
  type PlannedPoint,
  type StreamRef,
  cellValues,
  instanceCellValues,
  needsStream,
  seriesValues,
} from '../../common/ingest-plan.js';
import type { ResourceLimits } from '../../common/resource-limits.js';
import { AdvertisedWriter } from './advertised.js';
import { CumulativeStates } from './cumulative.js';
import { DimensionLimit } from './dimension-limit.js';
import { PointLog } from './point-log.js';
import { ResourceLimit } from './resource-limit.js';
import { StagedCache, StagedCache2 } from './staged-cache.js';

/**
 * Points applied between two turns of the event loop: a large export is applied in one transaction, but in steps
 * of a few milliseconds, so that other requests are answered meanwhile (the store holds its other writes back).
 */
export const APPLY_STEP_POINTS = 250;

type SeriesRef = Omit<StreamRef, 'streamId'>;

interface InstanceRow {
  id: number;
  advertised_ms: number | null;
  advertise_gen: number;
  ended_ms: number | null;
  clock_ms: number | null;
}

/** A stream row selected with its series' stored dimensions. */
function streamRef(row: unknown): StreamRef | undefined {
  if (row === undefined) return undefined;
  const { streamId, seriesId, cellId, allCellId } = row as Omit<StreamRef, 'dims'>;
  return { streamId, seriesId, cellId, allCellId, dims: storedDims(row as Record<string, unknown>) };
}

const placeholders = (count: number): string => Array.from({ length: count }, () => '?').join(', ');

/**
 * Applies one metrics batch inside the caller's transaction, as the ingest plan decides (common/ingest-plan.ts):
 * resolves instances, cells, series and streams, loads the cumulative state of each step's points, and writes
 * what the plan returns (state rows, `point_log` rows for the fold, what each instance advertises). Caches learnt
 * here are staged; the store commits or rolls them back with the transaction.
 */
export class MetricsWriter {
  private readonly streams = new StagedCache2<StreamRef>(200_000);
  private readonly series = new StagedCache<SeriesRef>(200_000);
  private readonly cells = new StagedCache<number>(100_000);
  private readonly instanceCells = new StagedCache<number>(100_000);
  private readonly log: PointLog;
  private readonly cumulative: CumulativeStates;
  private readonly advertised: AdvertisedWriter;
  private readonly dimensionLimit: DimensionLimit;
  private readonly resourceLimit: ResourceLimit;
  private readonly statements;
  /** Streams still keyed as schema 1 wrote them; while there are any, a stream not found is looked for by that key. */
  private schema1Streams: number;
  /** True when `point_log` may hold rows not folded yet (also after a restart). */
  private unfolded = true;

  constructor(
    db: Database.Database,
    private readonly clock: () => number,
    maxValuesPerDimension: number,
    resourceLimits: ResourceLimits,
  ) {
    this.dimensionLimit = new DimensionLimit(db, maxValuesPerDimension);
    this.resourceLimit = new ResourceLimit(db, resourceLimits);
    const instanceColumns = INSTANCE_UPSERT_COLUMNS;
    this.statements = {
      upsertInstance: db.prepare(`
        INSERT INTO instances (key_hash, ${instanceColumns.join(', ')}, first_seen_ms, last_seen_ms)
        VALUES (?, ${placeholders(instanceColumns.length)}, @now, @now)
        ON CONFLICT (key_hash) DO UPDATE SET
          ${instanceColumns
            .filter((column) => column !== 'service' && column !== 'instance_id')
            .map((column) => `${column} = coalesce(excluded.${column}, ${column}),`)
            .join('\n          ')}
          last_seen_ms = max(last_seen_ms, excluded.last_seen_ms)
        RETURNING id, advertised_ms, advertise_gen, ended_ms, clock_ms`),
      updateEnding: db.prepare('UPDATE instances SET ended_ms = ?, clock_ms = ? WHERE id = ?'),
      selectStream: db.prepare(
        `SELECT s.id AS streamId, s.series_id AS seriesId, r.cell_id AS cellId, r.all_cell_id AS allCellId, ${seriesDimsSql('r')} FROM streams s JOIN series r ON r.id = s.series_id WHERE s.key_hash = ?`,
      ),
      insertStream: db.prepare(`INSERT INTO streams (key_hash, series_id, temporality, key_version) VALUES (?, ?, ?, ${KEY_VERSION})`),
      selectSchema1Stream: db.prepare(
        `SELECT s.id AS streamId, s.series_id AS seriesId, r.cell_id AS cellId, r.all_cell_id AS allCellId, ${seriesDimsSql('r')} FROM streams s JOIN series r ON r.id = s.series_id WHERE s.key_hash = ? AND s.key_version = 1`,
      ),
      rekeyStream: db.prepare(`UPDATE streams SET key_hash = ?, key_version = ${KEY_VERSION} WHERE id = ?`),
      countSchema1Streams: db.prepare('SELECT count(*) FROM streams WHERE key_version = 1').pluck(),
      selectSeries: db.prepare('SELECT id AS seriesId, cell_id AS cellId, all_cell_id AS allCellId FROM series WHERE key_hash = ?'),
      insertSeries: db.prepare(
        `INSERT INTO series (key_hash, instance_ref, cell_id, all_cell_id, instance_cell_id, kind, ${SERIES_COLUMNS.map((column) => column.column).join(', ')})
         VALUES (?, ?, ?, ?, ?, ?, ${placeholders(SERIES_COLUMNS.length)})`,
      ),
      selectInstanceCells: db.prepare(
        `SELECT id, kind, ${INSTANCE_CELL_TABLE_COLUMNS.map((column) => column.column).join(', ')} FROM instance_cells WHERE instance_ref = ?`,
      ),
      insertInstanceCell: db.prepare(
        `INSERT INTO instance_cells (instance_ref, kind, ${INSTANCE_CELL_TABLE_COLUMNS.map((column) => column.column).join(', ')})
         VALUES (?, ?, ${placeholders(INSTANCE_CELL_TABLE_COLUMNS.length)})`,
      ),
      selectCell: db.prepare('SELECT id FROM cells WHERE key_hash = ?').pluck(),
      insertCell: db.prepare(
        `INSERT INTO cells (key_hash, scope, kind, service, ${CELL_COLUMNS.map((column) => column.column).join(', ')})
         VALUES (?, ?, ?, ?, ${placeholders(CELL_COLUMNS.length)})`,
      ),
    };
    this.log = new PointLog(db);
    this.cumulative = new CumulativeStates(db);
    this.advertised = new AdvertisedWriter(db);
    this.schema1Streams = this.statements.countSchema1Streams.get() as number;
  }

  /** Whether `point_log` may hold rows the fold has not reached. */
  get pendingRows(): boolean {
    return this.unfolded;
  }

  folded(): void {
    this.unfolded = false;
  }

  /** Cumulative state rows (streams × sender start times). */
  get cumulativeStreams(): number {
    return this.cumulative.size;
  }

  /**
   * Must run inside a transaction, which the caller keeps open until the steps are done: each `next()` applies
   * up to {@link APPLY_STEP_POINTS} points; the last one returns the result.
   */
  *apply(batch: MetricsBatch): Generator<void, ApplyResult, void> {
    const plan = new IngestPlan();
    const now = this.clock();
    for (const resourceBatch of batch.resources) yield* this.applyResource(resourceBatch, now, plan);
    return plan.result();
  }

  /**
   * After the transaction committed: what it learnt becomes visible to the next ones, a cache a step (each may
   * take an export's worth of new entries, tens of milliseconds at 20,000 points).
   */
  *commit(): Generator<void, void, void> {
    this.resourceLimit.commit();
    yield;
    this.streams.commit();
    yield;
    this.series.commit();
    yield;
    this.cells.commit();
    this.instanceCells.commit();
  }

  rollback(): void {
    this.streams.rollback();
    this.series.rollback();
    this.cells.rollback();
    this.instanceCells.rollback();
    this.recount();
  }

  /** After retention deleted rows that caches and counts may refer to. */
  forget(): void {
    this.streams.clear();
    this.series.clear();
    this.cells.clear();
    this.instanceCells.clear();
    this.recount();
  }

  /** After retention dropped superseded cumulative state. */
  recountState(): void {
    this.cumulative.recount();
  }

  private recount(): void {
    this.cumulative.recount();
    this.resourceLimit.recount();
    this.schema1Streams = this.statements.countSchema1Streams.get() as number;
  }

  private *applyResource(batch: ResourceBatch, now: number, plan: IngestPlan): Generator<void, void, void> {
    const resource = this.resourceLimit.apply(batch);
    const instance = this.statements.upsertInstance.get(identityHash(instanceKey(resource)), ...instanceValues(resource), { now }) as InstanceRow;
    const stored = { endedMs: instance.ended_ms, clockMs: instance.clock_ms };
    const ending = nextEnding(stored, batch, now);
    if (endingChanged(stored, ending)) this.statements.updateEnding.run(ending.endedMs, ending.clockMs, instance.id);

    let entries: PlannedPoint[] = [];
    const writeStep = (): void => {
      const planned = plan.points(entries, this.cumulative.load(entries));
      this.cumulative.write(planned.states);
      const inserted = this.log.insert(planned.log, (seriesId, value) => plan.added(seriesId, value));
      if (inserted > 0) this.unfolded = true;
      plan.logged(planned, inserted);
      entries = [];
    };
    let step = 0;
    for (const point of batch.counters) {
      if (++step % APPLY_STEP_POINTS === 0) {
        writeStep();
        yield;
      }
      if (needsStream(point)) entries.push({ point, stream: this.stream(instance.id, resource, point), service: resource.service });
    }
    writeStep();
    const advertisements = planAdvertisements(batch, resource, { advertisedMs: instance.advertised_ms, generation: instance.advertise_gen });
    if (advertisements !== undefined) this.advertised.write(instance.id, advertisements);
  }

  private stream(instanceRef: number, resource: ResourceIdentity, point: CounterPoint): StreamRef {
    const cached = this.streams.get(point.streamScope, point.streamAttributes);
    if (cached !== undefined) return cached;
    const hash = identityHash(streamKey(point.streamScope, point.streamAttributes));
    let stream = streamRef(this.statements.selectStream.get(hash)) ?? this.schema1Stream(point, hash);
    if (stream === undefined) {
      const series = this.seriesFor(instanceRef, resource, this.dimensionLimit.apply(point.dims));
      const streamId = Number(this.statements.insertStream.run(hash, series.seriesId, point.temporality).lastInsertRowid);
      stream = { streamId, ...series };
    }
    this.streams.stage(point.streamScope, point.streamAttributes, stream);
    return stream;
  }

  /** A stream that schema 1 keyed by attribute position, re-keyed by name (in the apply transaction). */
  private schema1Stream(point: CounterPoint, hash: Buffer): StreamRef | undefined {
    if (this.schema1Streams === 0) return undefined;
    const legacy = identityHash(streamKey(point.streamScope, point.schema1Attributes));
    const stream = streamRef(this.statements.selectSchema1Stream.get(legacy));
    if (stream === undefined) return undefined;
    this.statements.rekeyStream.run(hash, stream.streamId);
    this.schema1Streams--;
    return stream;
  }

  /** Values folded into `_OTHER` by the dimension limit since start. */
  get overflowedValues(): number {
    return this.dimensionLimit.overflowed;
  }

  /** New instances stored under `_OTHER` (service or instance id over its limit) since start. */
  get overflowedInstances(): number {
    return this.resourceLimit.overflowed;
  }

  private seriesFor(instanceRef: number, resource: ResourceIdentity, dims: Readonly<SeriesDims>): SeriesRef {
    const key = seriesKey(instanceRef, dims);
    const cached = this.series.get(key);
    if (cached !== undefined) return cached;
    const hash = identityHash(key);
    // A series found by key holds exactly these dimensions: the key is made from them.
    const row = this.statements.selectSeries.get(hash) as Omit<SeriesRef, 'dims'> | undefined;
    let found: SeriesRef | undefined = row === undefined ? undefined : { ...row, dims };
    if (found === undefined) {
      const cellId = this.cellFor(CellScope.Service, resource.service, dims);
      const allCellId = this.cellFor(CellScope.AllServices, null, dims);
      const instanceCellId = this.instanceCellFor(instanceRef, dims);
      const seriesId = Number(
        this.statements.insertSeries.run(hash, instanceRef, cellId, allCellId, instanceCellId, dims.kind, ...seriesValues(dims)).lastInsertRowid,
      );
      found = { seriesId, cellId, allCellId, dims };
    }
    this.series.stage(key, found);
    return found;
  }

  /** The series' instance cell: an instance's cells are looked up all at once (a few), then created as needed. */
  private instanceCellFor(instanceRef: number, dims: Readonly<SeriesDims>): number {
    const key = instanceCellKey(instanceRef, dims);
    let id = this.instanceCells.get(key);
    if (id !== undefined) return id;
    for (const row of this.statements.selectInstanceCells.all(instanceRef) as Record<string, unknown>[])
      this.instanceCells.stage(instanceCellKey(instanceRef, storedInstanceCellDims(row)), row['id'] as number);
    id = this.instanceCells.get(key);
    if (id === undefined) {
      id = Number(this.statements.insertInstanceCell.run(instanceRef, dims.kind, ...instanceCellValues(dims)).lastInsertRowid);
      this.instanceCells.stage(key, id);
    }
    return id;
  }

  private cellFor(scope: CellScope, service: string | null, dims: Readonly<SeriesDims>): number {
    const key = cellKey(scope, service, dims);
    const cached = this.cells.get(key);
    if (cached !== undefined) return cached;
    const hash = identityHash(key);
    let id = this.statements.selectCell.get(hash) as number | undefined;
    if (id === undefined) {
      id = Number(this.statements.insertCell.run(hash, scope, dims.kind, service, ...cellValues(dims)).lastInsertRowid);
    }
    this.cells.stage(key, id);
    return id;
  }
}
