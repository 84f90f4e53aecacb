import type { SpanExample } from '../../../model/batches.js';
import { planExamples } from '../../common/examples-plan.js';
import type { Queryable } from '../connection.js';

/** Writes the example requests each matrix cell keeps (common/examples-plan.ts), cells in the plan's (hash) order. */
export class ExamplesWriter {
  constructor(private readonly perCell: number) {}

  /** Must run inside a transaction. Returns how many examples were stored. */
  async write(db: Queryable, examples: readonly SpanExample[]): Promise<number> {
    let stored = 0;
    for (const { cellHash, extensionId, examples: list } of planExamples(examples, this.perCell)) {
      for (const example of list) {
        const result = await db.query(
          `INSERT INTO span_examples (cell_hash, service, instance_id, client_name, client_version, extension_id, trace_id, span_id,
             name, method, outcome, status_code, client_declaration, start_ms, duration_ms, client_extensions, server_extensions, negotiated, required)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
           ON CONFLICT (cell_hash, trace_id, span_id) DO NOTHING`,
          [
            cellHash,
            example.service,
            example.instanceId,
            example.clientName,
            example.clientVersion,
            extensionId,
            example.traceId,
            example.spanId,
            example.name,
            example.method,
            example.outcome,
            example.statusCode,
            example.clientDeclaration,
            example.startMs,
            example.durationMs,
            JSON.stringify(example.clientExtensions),
            JSON.stringify(example.serverExtensions),
            JSON.stringify(example.negotiated),
            JSON.stringify(example.required),
          ],
        );
        stored += result.rowCount ?? 0;
      }
      await db.query(
        `DELETE FROM span_examples WHERE id IN (
           SELECT id FROM span_examples WHERE cell_hash = $1 ORDER BY start_ms DESC, id DESC OFFSET $2)`,
        [cellHash, this.perCell],
      );
    }
    return stored;
  }
}
