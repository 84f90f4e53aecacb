import type { CounterPoint, MetricsBatch, ResourceIdentity, SeriesDims } from '../../../model/batches.js';
import type { ApplyResult } from '../../../model/records.js';
import { type AdvertisingState, planAdvertisements } from '../../common/advertisement-plan.js';
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
import { CellScope, cellKey, identityHash, instanceCellKey, instanceKey, seriesKey, streamKey } from '../../common/identity.js';
import {
  IngestPlan,
  KEY_VERSION,
  type LogRow,
  type PlannedPoint,
  type StreamRef,
  cellValues,
  instanceCellValues,
  needsStream,
  seriesValues,
} from '../../common/ingest-plan.js';
import { schema1StreamAttributes } from '../../common/stream-key-v1.js';
import type { Queryable } from '../connection.js';
import { writeAdvertised } from './advertised.js';
import { CumulativeStates } from './cumulative.js';
import { DimensionLimit, lockIdentityCreation } from './dimension-limit.js';
import { ResourceLimit } from './resource-limit.js';

interface StreamRow {
  h: string;
  stream_id: number;
  series_id: number;
  cell_id: number;
  all_cell_id: number;
}

const streamRef = (row: StreamRow): StreamRef => ({
  streamId: row.stream_id,
  seriesId: row.series_id,
  cellId: row.cell_id,
  allCellId: row.all_cell_id,
  dims: storedDims(row as unknown as Record<string, unknown>),
});

const params = (from: number, count: number): string => Array.from({ length: count }, (_, index) => `$${from + index}`).join(', ');
const instanceColumns = INSTANCE_UPSERT_COLUMNS;
const UPSERT_INSTANCE = `
  INSERT INTO instances (key_hash, ${instanceColumns.join(', ')}, first_seen_ms, last_seen_ms)
  VALUES ($1, ${params(2, instanceColumns.length)}, $${instanceColumns.length + 2}, $${instanceColumns.length + 2})
  ON CONFLICT (key_hash) DO UPDATE SET
    ${instanceColumns
      .filter((column) => column !== 'service' && column !== 'instance_id')
      .map((column) => `${column} = coalesce(excluded.${column}, instances.${column}),`)
      .join('\n    ')}
    last_seen_ms = GREATEST(instances.last_seen_ms, excluded.last_seen_ms)
  RETURNING id, advertised_ms, advertise_gen`;
const SELECT_STREAMS = `
  SELECT encode(s.key_hash, 'hex') AS h, s.id AS stream_id, s.series_id, r.cell_id, r.all_cell_id, ${seriesDimsSql('r')}
  FROM streams s JOIN series r ON r.id = s.series_id WHERE s.key_hash = ANY($1::bytea[])`;
/**
 * The export's increments logged under their identities (a retry's are there already) and, those that are new,
 * appended for the fold (fold.ts): one round trip, and no row another export writes.
 */
const INSERT_LOG = `
  WITH logged AS (
    INSERT INTO point_log (end_ns, stream_id, start_ns, minute, series_id, cell_id, all_cell_id, value)
    SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[]) ORDER BY 1, 2, 3
    ON CONFLICT (end_ns, stream_id, start_ns) DO NOTHING
    RETURNING minute, series_id, cell_id, all_cell_id, value
  ),
  pending AS (INSERT INTO pending_increments (minute, series_id, cell_id, all_cell_id, value) SELECT * FROM logged)
  SELECT * FROM logged`;

/**
 * Applies one metrics batch inside the caller's transaction, as the ingest plan decides (common/ingest-plan.ts),
 * made safe for several replicas writing at once: the state the plan needs is loaded under row locks, nothing is
 * taken from this process's memory (no id caches: another replica's retention may delete what a cache would still
 * name).
 *
 * Locks are taken in one order by every export, each kind in key order: instance rows (the upsert), the
 * identity-creation lock (only for new streams), cumulative state rows, dedup keys in `point_log`, then the
 * advertisement rows of instances already locked. The rollups are not written here: the export's new increments
 * are appended to `pending_increments`, which the fold (fold.ts) adds to them, so exports do not queue on the
 * rollup rows every export of a minute shares.
 */
export class MetricsWriter {
  private readonly cumulative = new CumulativeStates();
  private readonly dimensionLimit: DimensionLimit;
  private readonly resourceLimit: ResourceLimit;

  constructor(
    private readonly clock: () => number,
    maxValuesPerDimension: number,
    maxInstances: number,
  ) {
    this.dimensionLimit = new DimensionLimit(maxValuesPerDimension);
    this.resourceLimit = new ResourceLimit({ maxServices: maxValuesPerDimension, maxInstances });
  }

  /** Instances stored under `_OTHER` by this collector since start. */
  get overflowedInstances(): number {
    return this.resourceLimit.overflowed;
  }

  /** Values folded into `_OTHER` by this collector since start. */
  get overflowedValues(): number {
    return this.dimensionLimit.overflowed;
  }

  async apply(db: Queryable, batch: MetricsBatch): Promise<ApplyResult> {
    const now = this.clock();
    const resources = batch.resources
      .map((resourceBatch) => ({
        resourceBatch,
        resource: resourceBatch.resource,
        hash: identityHash(instanceKey(resourceBatch.resource)),
        instance: { id: 0, advertised_ms: null as number | null, advertise_gen: 0 },
      }))
      .sort((a, b) => Buffer.compare(a.hash, b.hash));
    for (const entry of resources) {
      // An instance past the cap is stored as `_OTHER` (its streams stay its own).
      const resource = (entry.resource = await this.resourceLimit.apply(db, entry.resourceBatch.resource));
      const hash = resource === entry.resourceBatch.resource ? entry.hash : identityHash(instanceKey(resource));
      const { rows } = await db.query<{ id: number; advertised_ms: number | null; advertise_gen: number }>(UPSERT_INSTANCE, [
        hash,
        ...instanceValues(resource),
        now,
      ]);
      entry.instance = rows[0] as (typeof entry)['instance'];
    }

    const counted = resources.flatMap(({ resourceBatch, resource, instance }) =>
      resourceBatch.counters
        .filter(needsStream)
        .map((point) => ({ point, instanceId: instance.id, resource, hash: identityHash(streamKey(point.streamScope, point.streamAttributes)) })),
    );
    const streams = await this.streams(db, counted);
    const entries = counted.map(({ point, hash, resource }): PlannedPoint => ({
      point,
      stream: streams.get(hash.toString('hex')) as StreamRef,
      service: resource.service,
    }));

    const plan = new IngestPlan();
    const planned = plan.points(entries, await this.cumulative.load(db, entries));
    await this.cumulative.write(db, planned.states);
    const inserted = await this.log(db, planned.log);
    for (const row of inserted) plan.added(row.series_id, row.value);
    plan.logged(planned, inserted.length);

    // As the instance upserts found them, then as this export moves them (two resources of one instance number their generations in turn).
    const advertising = new Map<number, AdvertisingState>();
    for (const { resourceBatch, resource, instance } of resources) {
      const state = advertising.get(instance.id) ?? { advertisedMs: instance.advertised_ms, generation: instance.advertise_gen };
      const advertisements = planAdvertisements(resourceBatch, resource, state);
      if (advertisements === undefined) continue;
      await writeAdvertised(db, instance.id, advertisements);
      advertising.set(instance.id, advertisements.instance ?? state);
    }
    return plan.result();
  }

  /** Inserts the rows whose identity is new (a retry's rows, from any replica, are already there); returns those. */
  private async log(db: Queryable, rows: readonly LogRow[]): Promise<{ series_id: number; value: number }[]> {
    if (rows.length === 0) return [];
    const { rows: inserted } = await db.query<{ series_id: number; value: number }>(INSERT_LOG, [
      rows.map((row) => row.endNs.toString()),
      rows.map((row) => row.streamId),
      rows.map((row) => row.startNs.toString()),
      rows.map((row) => row.minute),
      rows.map((row) => row.seriesId),
      rows.map((row) => row.cellId),
      rows.map((row) => row.allCellId),
      rows.map((row) => row.value),
    ]);
    return inserted;
  }

  /** Every stream of the batch, by key hash (hex): found in one query, the new ones created under the identity lock. */
  private async streams(
    db: Queryable,
    counted: readonly { point: CounterPoint; instanceId: number; resource: ResourceIdentity; hash: Buffer }[],
  ): Promise<Map<string, StreamRef>> {
    const found = new Map<string, StreamRef>();
    if (counted.length === 0) return found;
    const unique = new Map<string, (typeof counted)[number]>();
    for (const entry of counted) if (!unique.has(entry.hash.toString('hex'))) unique.set(entry.hash.toString('hex'), entry);
    const read = async (hashes: Buffer[]): Promise<void> => {
      const { rows } = await db.query<StreamRow>(SELECT_STREAMS, [hashes]);
      for (const row of rows) found.set(row.h, streamRef(row));
    };
    await read([...unique.values()].map((entry) => entry.hash));
    const missing = [...unique.entries()].filter(([hex]) => !found.has(hex)).sort(([a], [b]) => (a < b ? -1 : 1));
    if (missing.length === 0) return found;
    await lockIdentityCreation(db);
    // Another replica may have created some while this export waited for the lock.
    await read(missing.map(([, entry]) => entry.hash));
    const { rows: legacy } = await db.query<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM streams WHERE key_version = 1) AS any');
    const create: (typeof counted)[number][] = [];
    for (const [hex, entry] of missing) {
      if (found.has(hex)) continue;
      const legacyStream = legacy[0]?.any === true ? await this.schema1Stream(db, entry.point, entry.hash) : undefined;
      if (legacyStream === undefined) create.push(entry);
      else found.set(hex, legacyStream);
    }
    if (create.length > 0) await this.createStreams(db, create, found);
    return found;
  }

  /**
   * Creates streams with their series and cells, a few statements for the whole export (under the identity lock,
   * so nothing it looks up can appear meanwhile): the dimension limit decides each stream's stored values, then
   * the cells, series and streams not stored yet are inserted, each kind in one statement.
   */
  private async createStreams(
    db: Queryable,
    entries: readonly { point: CounterPoint; instanceId: number; resource: ResourceIdentity; hash: Buffer }[],
    found: Map<string, StreamRef>,
  ): Promise<void> {
    const cells = new Map<string, { hash: Buffer; values: unknown[]; id?: number }>();
    const series = new Map<
      string,
      { hash: Buffer; values: unknown[]; cellKey: string; allCellKey: string; instanceRef: number; dims: Readonly<SeriesDims>; id?: number }
    >();
    const streams: { hex: string; hash: Buffer; seriesHex: string; temporality: number }[] = [];
    const cellFor = (scope: CellScope, service: string | null, dims: Readonly<SeriesDims>): string => {
      const hash = identityHash(cellKey(scope, service, dims));
      const hex = hash.toString('hex');
      if (!cells.has(hex)) cells.set(hex, { hash, values: [hash, scope, dims.kind, service, ...cellValues(dims)] });
      return hex;
    };
    const limited = await this.dimensionLimit.apply(
      db,
      entries.map((entry) => entry.point.dims),
    );
    for (const [index, { point, instanceId, resource, hash }] of entries.entries()) {
      const dims = limited[index] as Readonly<SeriesDims>;
      const seriesHash = identityHash(seriesKey(instanceId, dims));
      const seriesHex = seriesHash.toString('hex');
      if (!series.has(seriesHex)) {
        const cell = cellFor(CellScope.Service, resource.service, dims);
        const allCell = cellFor(CellScope.AllServices, null, dims);
        // A series found by key holds exactly these dimensions: the key is made from them.
        series.set(seriesHex, {
          hash: seriesHash,
          values: [instanceId, dims.kind, ...seriesValues(dims)],
          cellKey: cell,
          allCellKey: allCell,
          instanceRef: instanceId,
          dims,
        });
      }
      streams.push({ hex: hash.toString('hex'), hash, seriesHex, temporality: point.temporality });
    }

    const existing = async (table: string, map: Map<string, { hash: Buffer; id?: number }>): Promise<void> => {
      const { rows } = await db.query<{ h: string; id: number }>(`SELECT encode(key_hash, 'hex') AS h, id FROM ${table} WHERE key_hash = ANY($1::bytea[])`, [
        [...map.values()].map((entry) => entry.hash),
      ]);
      for (const row of rows) (map.get(row.h) as { id?: number }).id = row.id;
    };
    const insert = async (table: string, columns: readonly { name: string; type: string }[], rows: readonly unknown[][]): Promise<Map<string, number>> => {
      const ids = new Map<string, number>();
      if (rows.length === 0) return ids;
      const result = await db.query<{ h: string; id: number }>(
        `INSERT INTO ${table} (${columns.map((column) => column.name).join(', ')})
         SELECT * FROM unnest(${columns.map((column, index) => `$${index + 1}::${column.type}[]`).join(', ')})
         RETURNING encode(key_hash, 'hex') AS h, id`,
        columns.map((_column, index) => rows.map((row) => row[index])),
      );
      for (const row of result.rows) ids.set(row.h, row.id);
      return ids;
    };
    const dimColumns = (list: readonly { column: string; flag: boolean }[]) =>
      list.map((column) => ({ name: column.column, type: column.flag ? 'smallint' : 'text' }));

    await existing('cells', cells);
    const newCells = [...cells.entries()].filter(([, cell]) => cell.id === undefined);
    const cellIds = await insert(
      'cells',
      [
        { name: 'key_hash', type: 'bytea' },
        { name: 'scope', type: 'smallint' },
        { name: 'kind', type: 'smallint' },
        { name: 'service', type: 'text' },
        ...dimColumns(CELL_COLUMNS),
      ],
      newCells.map(([, cell]) => cell.values),
    );
    for (const [hex, cell] of newCells) cell.id = cellIds.get(hex);
    const cellId = (hex: string): number => cells.get(hex)?.id as number;

    await existing('series', series);
    const newSeries = [...series.entries()].filter(([, entry]) => entry.id === undefined);
    const instanceCellIds = await this.instanceCells(
      db,
      newSeries.map(([, entry]) => entry),
    );
    const seriesIds = await insert(
      'series',
      [
        { name: 'key_hash', type: 'bytea' },
        { name: 'cell_id', type: 'bigint' },
        { name: 'all_cell_id', type: 'bigint' },
        { name: 'instance_cell_id', type: 'bigint' },
        { name: 'instance_ref', type: 'bigint' },
        { name: 'kind', type: 'smallint' },
        ...dimColumns(SERIES_COLUMNS),
      ],
      newSeries.map(([, entry]) => [
        entry.hash,
        cellId(entry.cellKey),
        cellId(entry.allCellKey),
        instanceCellIds.get(instanceCellKey(entry.instanceRef, entry.dims)),
        ...entry.values,
      ]),
    );
    for (const [hex, entry] of newSeries) entry.id = seriesIds.get(hex);
    // The cells of series that existed already are theirs (the same projection, unless the limit changed since).
    const { rows: stored } = await db.query<{ h: string; cell_id: number; all_cell_id: number }>(
      "SELECT encode(key_hash, 'hex') AS h, cell_id, all_cell_id FROM series WHERE key_hash = ANY($1::bytea[])",
      [[...series.values()].map((entry) => entry.hash)],
    );
    const seriesCells = new Map(stored.map((row) => [row.h, row]));

    const streamIds = await insert(
      'streams',
      [
        { name: 'key_hash', type: 'bytea' },
        { name: 'series_id', type: 'bigint' },
        { name: 'temporality', type: 'smallint' },
        { name: 'key_version', type: 'smallint' },
      ],
      streams.map((stream) => [stream.hash, series.get(stream.seriesHex)?.id, stream.temporality, KEY_VERSION]),
    );
    for (const stream of streams) {
      const owner = seriesCells.get(stream.seriesHex) as { cell_id: number; all_cell_id: number };
      const entry = series.get(stream.seriesHex) as { id?: number; dims: Readonly<SeriesDims> };
      found.set(stream.hex, {
        streamId: streamIds.get(stream.hex) as number,
        seriesId: entry.id as number,
        cellId: owner.cell_id,
        allCellId: owner.all_cell_id,
        dims: entry.dims,
      });
    }
  }

  /**
   * The instance cells of new series, by key (common/identity.ts): those of their instances read at once, the
   * missing ones inserted in one statement (under the identity lock, as the series).
   */
  private async instanceCells(db: Queryable, series: readonly { instanceRef: number; dims: Readonly<SeriesDims> }[]): Promise<Map<string, number>> {
    const ids = new Map<string, number>();
    if (series.length === 0) return ids;
    const columns = INSTANCE_CELL_TABLE_COLUMNS.map((column) => column.column);
    const learn = (rows: readonly Record<string, unknown>[]): void => {
      for (const row of rows) ids.set(instanceCellKey(Number(row['instance_ref']), storedInstanceCellDims(row)), Number(row['id']));
    };
    const { rows } = await db.query<Record<string, unknown>>(
      `SELECT id, instance_ref, kind, ${columns.join(', ')} FROM instance_cells WHERE instance_ref = ANY($1::bigint[])`,
      [[...new Set(series.map((entry) => entry.instanceRef))]],
    );
    learn(rows);
    const missing = new Map<string, unknown[]>();
    for (const { instanceRef, dims } of series) {
      const key = instanceCellKey(instanceRef, dims);
      if (!ids.has(key) && !missing.has(key)) missing.set(key, [instanceRef, dims.kind, ...instanceCellValues(dims)]);
    }
    if (missing.size === 0) return ids;
    const types = ['bigint', 'smallint', ...INSTANCE_CELL_TABLE_COLUMNS.map((column) => (column.flag ? 'smallint' : 'text'))];
    const inserted = await db.query<Record<string, unknown>>(
      `INSERT INTO instance_cells (instance_ref, kind, ${columns.join(', ')})
       SELECT * FROM unnest(${types.map((type, index) => `$${index + 1}::${type}[]`).join(', ')})
       RETURNING id, instance_ref, kind, ${columns.join(', ')}`,
      types.map((_type, index) => [...missing.values()].map((values) => values[index])),
    );
    learn(inserted.rows);
    return ids;
  }

  /** A stream keyed by attribute position (copied from a schema-1 SQLite database), re-keyed by name in this transaction. */
  private async schema1Stream(db: Queryable, point: CounterPoint, hash: Buffer): Promise<StreamRef | undefined> {
    const legacy = identityHash(streamKey(point.streamScope, schema1StreamAttributes(point.attributes)));
    const { rows } = await db.query<StreamRow>(`${SELECT_STREAMS.replace('ANY($1::bytea[])', '$1')} AND s.key_version = 1`, [legacy]);
    const row = rows[0];
    if (row === undefined) return undefined;
    await db.query(`UPDATE streams SET key_hash = $1, key_version = ${KEY_VERSION} WHERE id = $2`, [hash, row.stream_id]);
    return streamRef(row);
  }
}
