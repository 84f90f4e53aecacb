import type Database from 'better-sqlite3';
import type { InstanceRecord } from '../../../model/records.js';
import { type AdvertisedRow, type CountRow, type InstanceRow, instanceRecords } from '../../common/rows.js';
import type { InstancesQuery } from '../../store.js';

/** Instances with the full history of what they advertised; which rows are current is decided here. */
export class InstancesReader {
  private readonly instances: Database.Statement;
  private readonly advertised: Database.Statement;
  private readonly counts: Database.Statement;

  constructor(db: Database.Database) {
    this.instances = db.prepare(`
      SELECT * FROM instances WHERE (@service IS NULL OR service = @service) AND last_seen_ms >= @since ORDER BY service, instance_id`);
    this.advertised = db.prepare(`
      SELECT a.* FROM advertised a JOIN instances i ON i.id = a.instance_ref
      WHERE (@service IS NULL OR i.service = @service) AND i.last_seen_ms >= @since
      ORDER BY a.extension_id, a.fingerprint, a.server_name, a.server_version`);
    this.counts = db.prepare(`
      SELECT a.instance_ref, a.server_name, a.server_version, a.count, a.last_gen FROM advertised_counts a JOIN instances i ON i.id = a.instance_ref
      WHERE (@service IS NULL OR i.service = @service) AND i.last_seen_ms >= @since
      ORDER BY a.server_name, a.server_version`);
  }

  read(query: InstancesQuery): InstanceRecord[] {
    const parameters = { service: query.service ?? null, since: query.seenSinceMs ?? Number.MIN_SAFE_INTEGER };
    return instanceRecords(this.instances.all(parameters) as InstanceRow[], this.advertised.all(parameters) as AdvertisedRow[], this.counts.all(parameters) as CountRow[]);
  }
}
