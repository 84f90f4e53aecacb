import type { AdvertisementPlan } from '../../common/advertisement-plan.js';
import { INSTANCE_UPSERT_COLUMNS } from '../../common/columns.js';
import type { InstanceEnding } from '../../common/ending-rule.js';
import type { LogRow, StateWrite } from '../../common/ingest-plan.js';
import { type BatchedTransaction, NamedStatement, type Statement } from '../connection.js';

/** An instance row as an export leaves it: the resource values it brings (null keeps the stored value), its advertising. */
export interface InstanceWrite {
  id: number;
  values: Record<string, string | null>;
  /** When it ended and the newest time its exports carry, as the export leaves them (common/ending-rule.ts). */
  ending: InstanceEnding;
  advertisements: AdvertisementPlan | undefined;
}

/** Columns an instance row takes from its latest export (its key, service and instance id, never change). */
const UPDATED_COLUMNS = INSTANCE_UPSERT_COLUMNS.filter((column) => column !== 'service' && column !== 'instance_id');

/**
 * Everything an export writes, in one statement (one round trip), into rows it has locked (load.ts) or that only it
 * touches: the cumulative states it moved; its instance rows (last seen, resource values, the advertising
 * generation), found by their ids in the primary key (joined to the unnested values alone, the plan PostgreSQL keeps
 * for the prepared statement read every instance row at every export: 808 buffers an export at 200 instances);
 * what the instances advertise, each row written only when it changes; and its increments, logged
 * under their identities (a retry's are there already) and, those that are new, appended to `pending_increments`
 * for the fold (fold.ts), so that no export writes a row another export of the same minute writes. Returns how many
 * increments the log took and, only when that is not all of them, which (the rows as text cost the collector more
 * to read than the rest of the export).
 */
const WRITE = new NamedStatement(
  `
  WITH states AS (
    UPDATE cumulative_state c SET end_ns = k.e, value = k.v
    FROM unnest(@state_stream::bigint[], @state_start::bigint[], @state_end::bigint[], @state_value::bigint[]) AS k (s, st, e, v)
    WHERE c.stream_id = k.s AND c.start_ns = k.st
  ), instance_rows AS (
    UPDATE instances i SET
      ${UPDATED_COLUMNS.map((column) => `${column} = coalesce(k.${column}, i.${column}),`).join('\n      ')}
      last_seen_ms = GREATEST(i.last_seen_ms, @now::bigint),
      ended_ms = k.ended_ms,
      clock_ms = k.clock_ms,
      advertised_ms = coalesce(k.advertised_ms, i.advertised_ms),
      advertise_gen = coalesce(k.advertise_gen, i.advertise_gen)
    FROM unnest(@instance::bigint[], ${UPDATED_COLUMNS.map((column) => `@${column}::text[]`).join(', ')}, @advertised_ms::bigint[], @advertise_gen::bigint[], @ended_ms::bigint[], @clock_ms::bigint[])
      AS k (id, ${UPDATED_COLUMNS.join(', ')}, advertised_ms, advertise_gen, ended_ms, clock_ms)
    WHERE i.id = k.id AND i.id = ANY(@instance::bigint[])
  ), advertised_rows AS (
    INSERT INTO advertised AS a (instance_ref, server_name, server_version, extension_id, fingerprint, first_seen_ms, last_seen_ms, last_gen)
    SELECT * FROM unnest(@a0::bigint[], @a1::text[], @a2::text[], @a3::text[], @a4::text[], @a5::bigint[], @a6::bigint[], @a7::bigint[])
    ON CONFLICT (instance_ref, server_name, server_version, extension_id, fingerprint) DO UPDATE SET
      first_seen_ms = LEAST(a.first_seen_ms, excluded.first_seen_ms),
      last_seen_ms = GREATEST(a.last_seen_ms, excluded.last_seen_ms),
      last_gen = GREATEST(a.last_gen, excluded.last_gen)
    WHERE excluded.first_seen_ms < a.first_seen_ms OR excluded.last_seen_ms > a.last_seen_ms OR excluded.last_gen > a.last_gen
  ), count_rows AS (
    INSERT INTO advertised_counts AS a (instance_ref, server_name, server_version, count, first_seen_ms, last_seen_ms, last_gen)
    SELECT * FROM unnest(@c0::bigint[], @c1::text[], @c2::text[], @c3::bigint[], @c4::bigint[], @c5::bigint[], @c6::bigint[])
    ON CONFLICT (instance_ref, server_name, server_version) DO UPDATE SET
      count = CASE WHEN excluded.last_gen >= a.last_gen THEN excluded.count ELSE a.count END,
      first_seen_ms = LEAST(a.first_seen_ms, excluded.first_seen_ms),
      last_seen_ms = GREATEST(a.last_seen_ms, excluded.last_seen_ms),
      last_gen = GREATEST(a.last_gen, excluded.last_gen)
    WHERE (excluded.last_gen >= a.last_gen AND excluded.count <> a.count)
      OR excluded.first_seen_ms < a.first_seen_ms OR excluded.last_seen_ms > a.last_seen_ms OR excluded.last_gen > a.last_gen
  ), logged AS (
    INSERT INTO point_log (end_ns, stream_id, start_ns, minute, series_id, cell_id, all_cell_id, value)
    SELECT * FROM unnest(@l0::bigint[], @l1::bigint[], @l2::bigint[], @l3::bigint[], @l4::bigint[], @l5::bigint[], @l6::bigint[], @l7::bigint[]) ORDER BY 1, 2, 3
    ON CONFLICT (end_ns, stream_id, start_ns) DO NOTHING
    RETURNING end_ns, stream_id, start_ns, minute, series_id, cell_id, all_cell_id, value
  ), pending AS (
    INSERT INTO pending_increments (minute, series_id, cell_id, all_cell_id, value) SELECT minute, series_id, cell_id, all_cell_id, value FROM logged
  ), taken AS (
    SELECT count(*)::integer AS n FROM logged
  )
  SELECT n AS taken, CASE WHEN n < cardinality(@l0::bigint[]) THEN
    (SELECT coalesce(json_agg(json_build_array(stream_id, end_ns::text, start_ns::text, series_id, value)), '[]') FROM logged)
  END AS rows FROM taken`,
  'extscope-write-export',
);

/** `rows` as one array per column, bound as `@<prefix>0`, `@<prefix>1`, …. */
function columns(prefix: string, rows: readonly (readonly unknown[])[], width: number): Record<string, unknown[]> {
  return Object.fromEntries(Array.from({ length: width }, (_unused, column) => [`${prefix}${column}`, rows.map((row) => row[column])]));
}

/**
 * What the log took of an export's rows: all of them (nearly always: `rows` undefined), or, when some were there
 * already (a retry's) or came twice, those it took: their identities (stream, end, start), series and increments.
 */
export interface Taken {
  taken: number;
  rows: [streamId: number, endNs: string, startNs: string, seriesId: number, value: number][] | undefined;
}

/** {@link WRITE} with an export's values. */
export function writeStatement(now: number, states: readonly StateWrite[], instances: readonly InstanceWrite[], log: readonly LogRow[]): Statement {
  const advertised = instances.flatMap(({ id, advertisements }) => (advertisements?.advertised ?? []).map((row) => [id, ...row]));
  const counts = instances.flatMap(({ id, advertisements }) => (advertisements?.counts ?? []).map((row) => [id, ...row]));
  return WRITE.statement({
    state_stream: states.map((write) => write.streamId),
    state_start: states.map((write) => write.startNs),
    state_end: states.map((write) => write.state.endNs),
    state_value: states.map((write) => write.state.value),
    now,
    instance: instances.map((instance) => instance.id),
    ...Object.fromEntries(UPDATED_COLUMNS.map((column) => [column, instances.map((instance) => instance.values[column] ?? null)])),
    advertised_ms: instances.map((instance) => instance.advertisements?.instance?.advertisedMs ?? null),
    advertise_gen: instances.map((instance) => instance.advertisements?.instance?.generation ?? null),
    ended_ms: instances.map((instance) => instance.ending.endedMs),
    clock_ms: instances.map((instance) => instance.ending.clockMs),
    ...columns('a', advertised, 8),
    ...columns('c', counts, 7),
    l0: log.map((entry) => entry.endNs),
    l1: log.map((entry) => entry.streamId),
    l2: log.map((entry) => entry.startNs),
    l3: log.map((entry) => entry.minute),
    l4: log.map((entry) => entry.seriesId),
    l5: log.map((entry) => entry.cellId),
    l6: log.map((entry) => entry.allCellId),
    l7: log.map((entry) => entry.value),
  });
}

/** Writes an export as {@link WRITE} says, and commits (one round trip); says which of `log` the log took. */
export async function writeExport(
  transaction: BatchedTransaction,
  now: number,
  states: readonly StateWrite[],
  instances: readonly InstanceWrite[],
  log: readonly LogRow[],
): Promise<Taken> {
  const [row] = await transaction.last<{ taken: number; rows: Taken['rows'] | null }>(writeStatement(now, states, instances, log));
  return { taken: row?.taken ?? 0, rows: row?.rows ?? undefined };
}
