import type { SpanExample } from '../../model/batches.js';
import { exampleCellKey, identityHash } from './identity.js';

export interface ExampleCell {
  cellHash: Buffer;
  /** Null: the row's cell (service, client name and version, any extension). */
  extensionId: string | null;
  /** The batch's newest examples of the cell, newest first, at most `perCell`. */
  examples: SpanExample[];
}

/**
 * Which examples of a batch each matrix cell keeps: a request is an example of its row's cell (service, client name,
 * client version) and of the cell of each extension it involved; only each cell's newest `perCell` of the batch are
 * written, and the table is then trimmed to the newest `perCell` per cell. Cells in hash order, so that two writers
 * trimming the same cells lock them in one order.
 */
export function planExamples(examples: readonly SpanExample[], perCell: number): ExampleCell[] {
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
  const cells = [...byCell].map(([key, { extensionId, list }]) => ({
    cellHash: identityHash(key),
    extensionId,
    examples: list.sort((a, b) => b.startMs - a.startMs).slice(0, perCell),
  }));
  return cells.sort((a, b) => Buffer.compare(a.cellHash, b.cellHash));
}
