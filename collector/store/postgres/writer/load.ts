import { SERIES_COLUMNS, storedDims } from '../../common/columns.js';
import type { CumulativeState } from '../../common/cumulative-rule.js';
import { type StreamRef, StreamStarts } from '../../common/ingest-plan.js';
import { type BatchedTransaction, NamedStatement, type Queryable } from '../connection.js';
import type { KnownStream } from './known-streams.js';

/** An instance row as an export finds it, locked until the export's transaction ends. */
interface LockedInstance {
  id: number;
  advertised_ms: number | null;
  advertise_gen: number;
  ended_ms: number | null;
  clock_ms: number | null;
}

/** A cumulative state row to load and lock: the stream by key hash (it may not exist yet) and the sender's start time. */
export interface StateKey {
  streamHash: Buffer;
  startNs: bigint;
}

/** What an export finds stored: its instances, its streams (by key hash, hex), its cumulative states. */
export interface Loaded {
  instances: Map<string, LockedInstance>;
  streams: Map<string, StreamRef>;
  states: StreamStarts<CumulativeState>;
}

interface StateRow {
  stream_id: number;
  start_ns: string;
  end_ns: string;
  value: number;
}

const STREAM_FIELDS = ['kind', ...SERIES_COLUMNS.map((column) => column.column)].map((column) => `'${column}', r.${column}`).join(', ');

/**
 * Everything an export reads, in one statement (one round trip): its instance rows, locked FOR NO KEY UPDATE in key
 * order (an export of the same instance on another replica waits for this one's commit, and retention, which locks
 * them first, cannot drop their series meanwhile); its streams with their series (the series' dimensions only where
 * the series is not the one the collector names, see known-streams.ts); and the cumulative state of every
 * (stream, start time) it brings, created if absent (end −1, value 0: read back as no state) and locked by the
 * upsert, in (stream, start) order. The upsert's no-op update returns the row as the last commit left it (a plain
 * read in the same statement would see the statement's snapshot, older than the commit it waited for).
 *
 * The streams are looked up one key at a time (a lateral subquery with LIMIT 1: by the streams' and the series'
 * unique indexes, whatever the planner estimates): PostgreSQL's default costs assume pages read from disk, so with
 * a hundred keys it chose to scan every stream and every series and join them (25–30 ms an export at 12,550
 * streams, growing with the fleet) over a hundred lookups in pages it had in memory (about 1 ms). A stream that names
 * the series the collector knows for it skips the series' lookup (a CASE runs its subquery only when it is needed):
 * a series' cells and dimensions never change (its key is made from them), and its id is never given to another
 * series. That was a third of the load's CPU (0.30 against 0.21 ms for 72 known streams).
 */
const LOAD = new NamedStatement(
  `
  WITH i AS (
    SELECT encode(key_hash, 'hex') AS h, id, advertised_ms, advertise_gen, ended_ms, clock_ms FROM instances
    WHERE key_hash = ANY(@instances::bytea[]) ORDER BY key_hash FOR NO KEY UPDATE
  ), s AS (
    SELECT k.h AS key_hash, k.n, f.* FROM unnest(@streams::bytea[], @known_series::bigint[]) WITH ORDINALITY AS k (h, known, n) CROSS JOIN LATERAL (
      SELECT s.id AS stream_id, s.series_id, CASE WHEN s.series_id <> k.known THEN (
        SELECT json_build_array(r.cell_id, r.all_cell_id, json_build_object(${STREAM_FIELDS})) FROM series r WHERE r.id = s.series_id
      ) END AS series
      FROM streams s WHERE s.key_hash = k.h LIMIT 1
    ) AS f
  ), c AS (
    INSERT INTO cumulative_state AS c (stream_id, start_ns, end_ns, value)
    SELECT s.stream_id, k.st, -1, 0 FROM unnest(@state_streams::bytea[], @state_starts::bigint[]) AS k (h, st) JOIN s ON s.key_hash = k.h ORDER BY 1, 2
    ON CONFLICT (stream_id, start_ns) DO UPDATE SET end_ns = c.end_ns
    RETURNING c.stream_id, c.start_ns::text AS start_ns, c.end_ns::text AS end_ns, c.value
  )
  SELECT (SELECT json_agg(i) FROM i) AS instances,
         (SELECT json_agg(json_build_array(n, stream_id, series_id, series)) FROM s) AS streams,
         (SELECT json_agg(c) FROM c) AS states`,
  'extscope-load-export',
);

/**
 * A stream as {@link LOAD} returns it: its position in the keys sent, its ids, and its series' cells and dimensions
 * unless the series is the one the collector knows for it.
 */
type LoadedStream = [position: number, streamId: number, seriesId: number, series: [cellId: number, allCellId: number, dims: Record<string, unknown>] | null];

/**
 * Begins the export's transaction and loads (and locks) what it needs (one round trip); see {@link LOAD}. `streams`:
 * unique keys, each told what it last stored (see {@link KnownStream}); `states`: unique keys.
 */
export async function loadExport(
  transaction: BatchedTransaction,
  instanceHashes: readonly Buffer[],
  streams: readonly KnownStream[],
  states: readonly StateKey[],
): Promise<Loaded> {
  const rows = await transaction.first<{
    instances: (LockedInstance & { h: string })[] | null;
    streams: LoadedStream[] | null;
    states: StateRow[] | null;
  }>(
    LOAD.statement({
      instances: instanceHashes,
      streams: streams.map((stream) => stream.hash),
      known_series: streams.map((stream) => stream.stored?.seriesId ?? 0),
      state_streams: states.map((key) => key.streamHash),
      state_starts: states.map((key) => key.startNs),
    }),
  );
  const row = rows[0];
  const loaded: Loaded = { instances: new Map(), streams: new Map(), states: new StreamStarts() };
  for (const instance of row?.instances ?? []) loaded.instances.set(instance.h, instance);
  for (const [position, streamId, seriesId, series] of row?.streams ?? []) {
    const known = streams[position - 1] as KnownStream;
    const last = known.stored;
    // The stream as last stored, nearly always (the same series, whose cells and dimensions the load did not send):
    // kept rather than made again at every export (a new object held by the long-lived cache is one every scavenge
    // copies until it is promoted).
    if (series !== null) known.stored = { streamId, seriesId, cellId: series[0], allCellId: series[1], dims: storedDims(series[2]) };
    else if (last?.streamId !== streamId) known.stored = { ...(last as StreamRef), streamId, seriesId };
    loaded.streams.set(known.hex, known.stored as StreamRef);
  }
  addStates(loaded.states, row?.states ?? []);
  return loaded;
}

/** The cumulative states of streams an export has just created: created and locked as {@link LOAD} does. */
export async function loadStates(db: Queryable, states: StreamStarts<CumulativeState>, keys: readonly { streamId: number; startNs: bigint }[]): Promise<void> {
  if (keys.length === 0) return;
  const sorted = [...keys].sort((a, b) => a.streamId - b.streamId || (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : 0));
  const { rows } = await db.query<StateRow>(
    `INSERT INTO cumulative_state AS c (stream_id, start_ns, end_ns, value)
     SELECT s, st, -1, 0 FROM unnest($1::bigint[], $2::bigint[]) AS k (s, st) ORDER BY s, st
     ON CONFLICT (stream_id, start_ns) DO UPDATE SET end_ns = c.end_ns
     RETURNING c.stream_id, c.start_ns::text AS start_ns, c.end_ns::text AS end_ns, c.value`,
    [sorted.map((key) => key.streamId), sorted.map((key) => key.startNs.toString())],
  );
  addStates(states, rows);
}

/** A row created just now (end −1) is no state at all. */
function addStates(states: StreamStarts<CumulativeState>, rows: readonly StateRow[]): void {
  for (const row of rows) if (row.end_ns !== '-1') states.add(row.stream_id, BigInt(row.start_ns), { endNs: BigInt(row.end_ns), value: Number(row.value) });
}
