import type Database from 'better-sqlite3';
import type { ExampleRecord } from '../../../model/records.js';
import type { ExamplesQuery } from '../../store.js';
import { type ExampleRow, exampleRecord } from '../../common/rows.js';

/** Example requests of a matrix row (no extension) or cell, newest first. */
export class ExamplesReader {
  private readonly select: Database.Statement;

  constructor(db: Database.Database) {
    this.select = db.prepare(`
      SELECT * FROM span_examples
      WHERE (@service IS NULL OR service = @service)
        AND (@clientName IS NULL OR client_name = @clientName)
        AND (@clientVersion IS NULL OR client_version = @clientVersion)
        AND extension_id IS @extensionId
      ORDER BY start_ms DESC, id DESC LIMIT @limit`);
  }

  read(query: ExamplesQuery): ExampleRecord[] {
    const rows = this.select.all({
      service: query.service ?? null,
      clientName: query.clientName ?? null,
      clientVersion: query.clientVersion ?? null,
      extensionId: query.extensionId ?? null,
      limit: query.limit,
    }) as ExampleRow[];
    return rows.map(exampleRecord);
  }
}
