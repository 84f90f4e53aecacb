import type Database from 'better-sqlite3';
import type { SpanExample } from '../../../model/batches.js';
import { planExamples } from '../../common/examples-plan.js';

/** Writes the example requests each matrix cell keeps (common/examples-plan.ts): a sample for drill-down only. */
export class ExamplesWriter {
  private readonly insert: Database.Statement;
  private readonly trim: Database.Statement;

  constructor(
    db: Database.Database,
    private readonly perCell: number,
  ) {
    this.insert = db.prepare(`
      INSERT OR IGNORE INTO span_examples (cell_hash, service, instance_id, client_name, client_version, extension_id, trace_id, span_id,
        name, method, outcome, status_code, client_declaration, start_ms, duration_ms, client_extensions, server_extensions, negotiated, required)
      VALUES (@cellHash, @service, @instanceId, @clientName, @clientVersion, @extensionId, @traceId, @spanId,
        @name, @method, @outcome, @statusCode, @clientDeclaration, @startMs, @durationMs, @clientExtensions, @serverExtensions, @negotiated, @required)`);
    this.trim = db.prepare(`
      DELETE FROM span_examples WHERE cell_hash = @cellHash AND id IN (
        SELECT id FROM span_examples WHERE cell_hash = @cellHash ORDER BY start_ms DESC, id DESC LIMIT -1 OFFSET @keep)`);
  }

  /** Must run inside a transaction. Returns how many examples were stored. */
  write(examples: readonly SpanExample[]): number {
    let stored = 0;
    for (const { cellHash, extensionId, examples: list } of planExamples(examples, this.perCell)) {
      for (const example of list) {
        stored += this.insert.run({
          cellHash,
          service: example.service,
          instanceId: example.instanceId,
          clientName: example.clientName,
          clientVersion: example.clientVersion,
          extensionId,
          traceId: example.traceId,
          spanId: example.spanId,
          name: example.name,
          method: example.method,
          outcome: example.outcome,
          statusCode: example.statusCode,
          clientDeclaration: example.clientDeclaration,
          startMs: example.startMs,
          durationMs: example.durationMs,
          clientExtensions: JSON.stringify(example.clientExtensions),
          serverExtensions: JSON.stringify(example.serverExtensions),
          negotiated: JSON.stringify(example.negotiated),
          required: JSON.stringify(example.required),
        }).changes;
      }
      this.trim.run({ cellHash, keep: this.perCell });
    }
    return stored;
  }
}
