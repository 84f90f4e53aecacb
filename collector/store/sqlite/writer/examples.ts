import type Database from 'better-sqlite3';
import type { SpanExample } from '../../../model/batches.js';
import { exampleCellKey, identityHash } from '../../common/identity.js';

/**
 * Keeps the newest few example requests per matrix cell: (service, client name, client version) with no
 * extension (the row) and with each extension the request involved (the cells). A sample for drill-down only.
 */
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
    // Keep only the newest `perCell` of this batch per cell before touching the table.
    const byCell = new Map<string, { extensionId: string | null; list: SpanExample[] }>();
    for (const example of examples) {
      const ids = new Set<string | null>([null, ...example.clientExtensions, ...example.serverExtensions, ...example.required]);
      for (const extensionId of ids) {
        const key = exampleCellKey(example.service, example.clientName, example.clientVersion, extensionId);
        let cell = byCell.get(key);
        if (cell === undefined) byCell.set(key, (cell = { extensionId, list: [] }));
        cell.list.push(example);
      }
    }
    let stored = 0;
    for (const [key, { extensionId, list }] of byCell) {
      const cellHash = identityHash(key);
      list.sort((a, b) => b.startMs - a.startMs);
      for (const example of list.slice(0, this.perCell)) {
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
