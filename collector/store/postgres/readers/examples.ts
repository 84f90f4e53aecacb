import type { ExampleRecord } from '../../../model/records.js';
import type { ExamplesQuery } from '../../store.js';
import type { Queryable } from '../connection.js';

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
export async function readExamples(db: Queryable, query: ExamplesQuery): Promise<ExampleRecord[]> {
  const { rows } = await db.query<ExampleRow>(
    `SELECT * FROM span_examples
     WHERE ($1::text IS NULL OR service = $1::text)
       AND ($2::text IS NULL OR client_name = $2::text)
       AND ($3::text IS NULL OR client_version = $3::text)
       AND extension_id IS NOT DISTINCT FROM $4::text
     ORDER BY start_ms DESC, id DESC LIMIT $5`,
    [query.service ?? null, query.clientName ?? null, query.clientVersion ?? null, query.extensionId ?? null, query.limit],
  );
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
