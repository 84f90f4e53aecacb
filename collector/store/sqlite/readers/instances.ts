import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import type { InstanceRecord } from '../../../model/records.js';
import { type AdvertisedRow, type CountRow, type InstanceRow, instanceRecords } from '../../common/rows.js';
import type { InstancesQuery } from '../../store.js';

/**
 * Instances whose advertisements are read per statement, with a turn of the event loop between: 2,000 instances
 * advertising 32 ids each are 64,000 rows, ~200 ms of event loop read in one statement on a loaded machine (250 at a time still ~50 ms).
 */
const INSTANCES_PER_CHUNK = 100;

/** Instances with the full history of what they advertised; which rows are current is decided here. */
export class InstancesReader {
  private readonly instances: Database.Statement;
  private readonly chunk: Database.Statement;
  private readonly advertised: Database.Statement;
  private readonly counts: Database.Statement;

  constructor(db: Database.Database) {
    this.instances = db
      .prepare(
        `
      SELECT id FROM instances WHERE (@service IS NULL OR service = @service) AND last_seen_ms >= @since ORDER BY service, instance_id`,
      )
      .pluck();
    this.chunk = db.prepare('SELECT * FROM instances WHERE id IN (SELECT value FROM json_each(@refs))');
    // Each instance's rows in the order one statement over all of them gives (rows are grouped per instance after).
    this.advertised = db.prepare(`
      SELECT a.* FROM advertised a WHERE a.instance_ref IN (SELECT value FROM json_each(@refs))
      ORDER BY a.extension_id, a.fingerprint, a.server_name, a.server_version`);
    this.counts = db.prepare(`
      SELECT a.instance_ref, a.server_name, a.server_version, a.count, a.last_gen FROM advertised_counts a WHERE a.instance_ref IN (SELECT value FROM json_each(@refs))
      ORDER BY a.server_name, a.server_version`);
  }

  async read(query: InstancesQuery): Promise<InstanceRecord[]> {
    const parameters = { service: query.service ?? null, since: query.seenSinceMs ?? Number.MIN_SAFE_INTEGER };
    const ids = this.instances.all(parameters) as number[];
    const records: InstanceRecord[] = [];
    for (let start = 0; start < ids.length; start += INSTANCES_PER_CHUNK) {
      if (start > 0) await yieldToEventLoop();
      // An instance's row and its advertisements are read in one turn, so that ingest between chunks cannot make
      // them disagree on which advertisement is current.
      const refs = JSON.stringify(ids.slice(start, start + INSTANCES_PER_CHUNK));
      const byId = new Map((this.chunk.all({ refs }) as InstanceRow[]).map((row) => [row.id, row]));
      // In the order of the first statement; an instance removed since (retention) is left out.
      const rows = ids.slice(start, start + INSTANCES_PER_CHUNK).flatMap((id) => byId.get(id) ?? []);
      for (const record of instanceRecords(rows, this.advertised.all({ refs }) as AdvertisedRow[], this.counts.all({ refs }) as CountRow[]))
        records.push(record);
    }
    return records;
  }
}
