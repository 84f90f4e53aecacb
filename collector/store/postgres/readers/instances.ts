import type { InstanceRecord } from '../../../model/records.js';
import { type AdvertisedRow, type CountRow, type InstanceRow, instanceRecords } from '../../common/rows.js';
import type { InstancesQuery } from '../../store.js';
import type { Queryable } from '../connection.js';

const FILTER = '($1::text IS NULL OR i.service = $1::text) AND i.last_seen_ms >= $2';

/**
 * Instances with the full history of what they advertised (common/rows.ts decides which rows are current). The three reads
 * share one snapshot (REPEATABLE READ, read only), so that an instance and its advertisements agree even
 * while another replica is writing them.
 */
export async function readInstances(db: Queryable, query: InstancesQuery): Promise<InstanceRecord[]> {
  const parameters = [query.service ?? null, query.seenSinceMs ?? Number.MIN_SAFE_INTEGER];
  // In the order every store lists them: NULL first, then bytewise (the C collation), whatever the database's locale.
  const rows = (
    await db.query<InstanceRow>(
      `SELECT i.* FROM instances i WHERE ${FILTER} ORDER BY i.service COLLATE "C" NULLS FIRST, i.instance_id COLLATE "C" NULLS FIRST`,
      parameters,
    )
  ).rows;
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
  return instanceRecords(rows, advertised, counts);
}
