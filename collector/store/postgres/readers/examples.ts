import type { ExampleRecord } from '../../../model/records.js';
import type { ExamplesQuery } from '../../store.js';
import { type ExampleRow, exampleRecord } from '../../common/rows.js';
import type { Queryable } from '../connection.js';

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
  return rows.map(exampleRecord);
}
