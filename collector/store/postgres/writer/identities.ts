import type { CounterPoint, SeriesDims } from '../../../model/batches.js';
import { CELL_COLUMNS, INSTANCE_CELL_TABLE_COLUMNS, SERIES_COLUMNS, seriesDimsSql, storedDims, storedInstanceCellDims } from '../../common/columns.js';
import { CellScope, cellKey, identityHash, instanceCellKey, seriesKey, streamKey } from '../../common/identity.js';
import { KEY_VERSION, type StreamRef, cellValues, instanceCellValues, seriesValues } from '../../common/ingest-plan.js';
import type { Queryable } from '../connection.js';
import type { DimensionLimit } from './dimension-limit.js';

/** A stream an export brings that is not stored: its point, the instance it reports for, its key hash. */
export interface NewStream {
  point: CounterPoint;
  instanceId: number;
  service: string | null;
  hash: Buffer;
}

interface Owned {
  hash: Buffer;
  values: unknown[];
  id?: number;
}

const dimColumns = (list: readonly { column: string; flag: boolean }[]) =>
  list.map((column) => ({ name: column.column, type: column.flag ? 'smallint' : 'text' }));
const CELL_INSERT = [
  { name: 'key_hash', type: 'bytea' },
  { name: 'scope', type: 'smallint' },
  { name: 'kind', type: 'smallint' },
  { name: 'service', type: 'text' },
  ...dimColumns(CELL_COLUMNS),
];
const SERIES_INSERT = [
  { name: 'key_hash', type: 'bytea' },
  { name: 'cell_id', type: 'bigint' },
  { name: 'all_cell_id', type: 'bigint' },
  { name: 'instance_cell_id', type: 'bigint' },
  { name: 'instance_ref', type: 'bigint' },
  { name: 'kind', type: 'smallint' },
  ...dimColumns(SERIES_COLUMNS),
];
const STREAM_INSERT = [
  { name: 'key_hash', type: 'bytea' },
  { name: 'series_id', type: 'bigint' },
  { name: 'temporality', type: 'smallint' },
  { name: 'key_version', type: 'smallint' },
];

/**
 * Creates an export's new streams with their series and cells, a few statements for the whole export and without a
 * lock every export would share: each kind is inserted in key order with ON CONFLICT DO NOTHING (two exports
 * creating the same rows wait for each other in one order, cells, then series, then streams, and the second takes
 * the first's), and the rows another export created meanwhile are then read. The dimension limit decides each new
 * series' stored values first.
 */
export async function createStreams(
  db: Queryable,
  dimensionLimit: DimensionLimit,
  entries: readonly NewStream[],
  found: Map<string, StreamRef>,
): Promise<void> {
  const cells = new Map<string, Owned>();
  const series = new Map<string, Owned & { cellKey: string; allCellKey: string; instanceRef: number; dims: Readonly<SeriesDims> }>();
  const streams: { hex: string; hash: Buffer; seriesHex: string; temporality: number }[] = [];
  const cellFor = (scope: CellScope, service: string | null, dims: Readonly<SeriesDims>): string => {
    const hash = identityHash(cellKey(scope, service, dims));
    const hex = hash.toString('hex');
    if (!cells.has(hex)) cells.set(hex, { hash, values: [hash, scope, dims.kind, service, ...cellValues(dims)] });
    return hex;
  };
  const limited = await dimensionLimit.apply(
    db,
    entries.map((entry) => entry.point.dims),
  );
  for (const [index, { point, instanceId, service, hash }] of entries.entries()) {
    const dims = limited[index] as Readonly<SeriesDims>;
    const seriesHash = identityHash(seriesKey(instanceId, dims));
    const seriesHex = seriesHash.toString('hex');
    if (!series.has(seriesHex)) {
      const cell = cellFor(CellScope.Service, service, dims);
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

  await insertOrFind(db, 'cells', CELL_INSERT, cells, (cell) => cell.values);
  const cellId = (hex: string): number => cells.get(hex)?.id as number;
  const instanceCellIds = await instanceCells(db, [...series.values()]);
  await insertOrFind(db, 'series', SERIES_INSERT, series, (entry) => [
    entry.hash,
    cellId(entry.cellKey),
    cellId(entry.allCellKey),
    instanceCellIds.get(instanceCellKey(entry.instanceRef, entry.dims)),
    ...entry.values,
  ]);
  // The cells of series that existed already are theirs (the same projection, unless the limit changed since).
  const { rows: stored } = await db.query<{ h: string; cell_id: number; all_cell_id: number }>(
    "SELECT encode(key_hash, 'hex') AS h, cell_id, all_cell_id FROM series WHERE key_hash = ANY($1::bytea[])",
    [[...series.values()].map((entry) => entry.hash)],
  );
  const seriesCells = new Map(stored.map((row) => [row.h, row]));

  const byStream = new Map<string, Owned & { seriesHex: string }>();
  for (const stream of streams) {
    byStream.set(stream.hex, {
      hash: stream.hash,
      seriesHex: stream.seriesHex,
      values: [stream.hash, series.get(stream.seriesHex)?.id, stream.temporality, KEY_VERSION],
    });
  }
  await insertOrFind(db, 'streams', STREAM_INSERT, byStream, (stream) => stream.values);
  for (const [hex, stream] of byStream) {
    const owner = seriesCells.get(stream.seriesHex) as { cell_id: number; all_cell_id: number };
    const entry = series.get(stream.seriesHex) as { id?: number; dims: Readonly<SeriesDims> };
    found.set(hex, { streamId: stream.id as number, seriesId: entry.id as number, cellId: owner.cell_id, allCellId: owner.all_cell_id, dims: entry.dims });
  }
}

/**
 * The instance cells of an export's new series, by key (common/identity.ts): those of their instances read at once,
 * the missing ones inserted in one statement. Only this export creates its instances' cells: it holds their instance
 * rows (load.ts).
 */
async function instanceCells(db: Queryable, series: readonly { instanceRef: number; dims: Readonly<SeriesDims> }[]): Promise<Map<string, number>> {
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

/**
 * Inserts the rows in key order, those already there left as they are, and sets every entry's id: the inserted
 * rows' from RETURNING, the others' (there before, or created meanwhile by a transaction this one waited for) read.
 */
async function insertOrFind<Entry extends Owned>(
  db: Queryable,
  table: string,
  columns: readonly { name: string; type: string }[],
  entries: Map<string, Entry>,
  values: (entry: Entry) => unknown[],
): Promise<void> {
  if (entries.size === 0) return;
  const sorted = [...entries.values()].sort((a, b) => Buffer.compare(a.hash, b.hash));
  const rows = sorted.map(values);
  const { rows: inserted } = await db.query<{ h: string; id: number }>(
    `INSERT INTO ${table} (${columns.map((column) => column.name).join(', ')})
     SELECT * FROM unnest(${columns.map((column, index) => `$${index + 1}::${column.type}[]`).join(', ')}) ORDER BY 1
     ON CONFLICT (key_hash) DO NOTHING
     RETURNING encode(key_hash, 'hex') AS h, id`,
    columns.map((_column, index) => rows.map((row) => row[index])),
  );
  for (const row of inserted) (entries.get(row.h) as Entry).id = row.id;
  const missing = sorted.filter((entry) => entry.id === undefined);
  if (missing.length === 0) return;
  const { rows: existing } = await db.query<{ h: string; id: number }>(
    `SELECT encode(key_hash, 'hex') AS h, id FROM ${table} WHERE key_hash = ANY($1::bytea[])`,
    [missing.map((entry) => entry.hash)],
  );
  for (const row of existing) (entries.get(row.h) as Entry).id = row.id;
}

/**
 * A stream keyed by attribute position (copied from a schema-1 SQLite database), re-keyed by name in this
 * transaction. Only while such streams remain; the caller holds {@link lockSchema1Rekeying}.
 */
export async function schema1Stream(db: Queryable, point: CounterPoint, hash: Buffer): Promise<StreamRef | undefined> {
  const legacy = identityHash(streamKey(point.streamScope, point.schema1Attributes));
  const { rows } = await db.query<{ stream_id: number; series_id: number; cell_id: number; all_cell_id: number } & Record<string, unknown>>(
    `SELECT s.id AS stream_id, s.series_id, r.cell_id, r.all_cell_id, ${seriesDimsSql('r')}
     FROM streams s JOIN series r ON r.id = s.series_id WHERE s.key_hash = $1 AND s.key_version = 1`,
    [legacy],
  );
  const row = rows[0];
  if (row === undefined) return undefined;
  await db.query(`UPDATE streams SET key_hash = $1, key_version = ${KEY_VERSION} WHERE id = $2`, [hash, row.stream_id]);
  return { streamId: row.stream_id, seriesId: row.series_id, cellId: row.cell_id, allCellId: row.all_cell_id, dims: storedDims(row) };
}

/**
 * While streams keyed by position remain (a database copied from schema 1), new streams are created one export at
 * a time: re-keying one and creating the same key anew must not interleave. Returns whether any remain.
 */
export async function lockSchema1Rekeying(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM streams WHERE key_version = 1) AS any');
  if (rows[0]?.any !== true) return false;
  await db.query("SELECT pg_advisory_xact_lock(hashtextextended('extscope:schema1-streams', 0))");
  return true;
}
