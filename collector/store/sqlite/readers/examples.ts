import type Database from 'better-sqlite3';
import type { ExampleRecord } from '../../../model/records.js';
import type { ExamplesQuery } from '../../store.js';

interface ExampleRow {
  service: string | null;
  instance_id: string | null;
  trace_id: string;
  span_id: string;
  name: string;
  method: string | null;
  outcome: string | null;
  status_code: string | null;
  client_name: string | null;
  client_version: string | null;
  client_declaration: string | null;
  start_ms: number;
  duration_ms: number;
  client_extensions: string;
  server_extensions: string;
  negotiated: string;
  required: string;
}

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
    return rows.map((row) => ({
      service: row.service,
      instanceId: row.instance_id,
      traceId: row.trace_id,
      spanId: row.span_id,
      name: row.name,
      method: row.method,
      outcome: row.outcome,
      statusCode: row.status_code,
      clientName: row.client_name,
      clientVersion: row.client_version,
      clientDeclaration: row.client_declaration,
      startMs: row.start_ms,
      durationMs: row.duration_ms,
      clientExtensions: JSON.parse(row.client_extensions) as string[],
      serverExtensions: JSON.parse(row.server_extensions) as string[],
      negotiated: JSON.parse(row.negotiated) as string[],
      required: JSON.parse(row.required) as string[],
    }));
  }
}
