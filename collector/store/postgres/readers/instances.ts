import type { AdvertisedCountRecord, AdvertisedRecord, InstanceRecord } from '../../../model/records.js';
import { INSTANCE_COLUMNS } from '../../sqlite/columns.js';
import type { InstancesQuery } from '../../store.js';
import type { Queryable } from '../connection.js';

interface InstanceRow extends Record<string, unknown> {
  id: number;
  first_seen_ms: number;
  last_seen_ms: number;
  advertised_ms: number | null;
  advertise_gen: number;
}

interface AdvertisedRow {
  instance_ref: number;
  server_name: string;
  server_version: string;
  extension_id: string;
  fingerprint: string;
  first_seen_ms: number;
  last_seen_ms: number;
  last_gen: number;
}

interface CountRow {
  instance_ref: number;
  server_name: string;
  server_version: string;
  count: number;
  last_gen: number;
}

const orNull = (value: string): string | null => (value === '' ? null : value);
const FILTER = '($1::text IS NULL OR i.service = $1::text) AND i.last_seen_ms >= $2';

/**
 * Instances with the full history of what they advertised (as sqlite/readers/instances.ts). The three reads
 * share one snapshot (REPEATABLE READ, read only), so that an instance and its advertisements agree even
 * while another replica is writing them.
 */
export async function readInstances(db: Queryable, query: InstancesQuery): Promise<InstanceRecord[]> {
  const parameters = [query.service ?? null, query.seenSinceMs ?? Number.MIN_SAFE_INTEGER];
  // Ordered as SQLite orders them: NULL first, then bytewise (the C collation), whatever the database's locale.
  const rows = (await db.query<InstanceRow>(`SELECT i.* FROM instances i WHERE ${FILTER} ORDER BY i.service COLLATE "C" NULLS FIRST, i.instance_id COLLATE "C" NULLS FIRST`, parameters)).rows;
  const advertised = (
    await db.query<AdvertisedRow>(
      `SELECT a.* FROM advertised a JOIN instances i ON i.id = a.instance_ref WHERE ${FILTER}
       ORDER BY a.extension_id COLLATE "C", a.fingerprint COLLATE "C", a.server_name COLLATE "C", a.server_version COLLATE "C"`,
      parameters,
    )
  ).rows;
  const counts = (
    await db.query<CountRow>(
      `SELECT a.instance_ref, a.server_name, a.server_version, a.count, a.last_gen FROM advertised_counts a JOIN instances i ON i.id = a.instance_ref WHERE ${FILTER}
       ORDER BY a.server_name COLLATE "C", a.server_version COLLATE "C"`,
      parameters,
    )
  ).rows;
  const byId = new Map<number, { row: InstanceRow; record: InstanceRecord }>();
  for (const row of rows) {
    const record = {} as Record<string, unknown>;
    for (const column of INSTANCE_COLUMNS) record[column.key] = row[column.column] ?? null;
    record['firstSeenMs'] = row.first_seen_ms;
    record['lastSeenMs'] = row.last_seen_ms;
    record['advertisedMs'] = row.advertised_ms;
    record['advertised'] = [];
    record['counts'] = [];
    byId.set(row.id, { row, record: record as unknown as InstanceRecord });
  }
  const current = (owner: InstanceRow, lastGen: number): boolean => lastGen === owner.advertise_gen && owner.advertise_gen > 0;
  for (const row of advertised) {
    const owner = byId.get(row.instance_ref);
    if (owner === undefined) continue;
    const record: AdvertisedRecord = {
      serverName: orNull(row.server_name),
      serverVersion: orNull(row.server_version),
      extensionId: row.extension_id,
      fingerprint: orNull(row.fingerprint),
      firstSeenMs: row.first_seen_ms,
      lastSeenMs: row.last_seen_ms,
      current: current(owner.row, row.last_gen),
    };
    owner.record.advertised.push(record);
  }
  for (const row of counts) {
    const owner = byId.get(row.instance_ref);
    if (owner === undefined) continue;
    const record: AdvertisedCountRecord = { serverName: orNull(row.server_name), serverVersion: orNull(row.server_version), count: row.count, current: current(owner.row, row.last_gen) };
    owner.record.counts.push(record);
  }
  return [...byId.values()].map((entry) => entry.record);
}
