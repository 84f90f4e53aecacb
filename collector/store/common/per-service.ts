import type { InstanceCellTotal, InstanceCellTotals } from '../../model/records.js';

/**
 * Instance cell totals summed over the instances of each service (InstanceCellQuery.perService): what rows by service
 * are made of, a total per service and cell however many instances it has. Their instance, build and `instanceRef`
 * (0) name no instance. Exact: counts are only added.
 */
export function summedPerService(totals: InstanceCellTotals): InstanceCellTotals {
  const sums = new Map<string, InstanceCellTotal>();
  for (const cell of totals.cells) {
    const key = JSON.stringify([
      cell.service,
      cell.kind,
      cell.clientName,
      cell.clientVersion,
      cell.clientDeclaration,
      cell.extensionId,
      cell.clientDeclared,
      cell.serverDeclared,
      cell.negotiated,
      cell.serverDeclaration,
      cell.required,
    ]);
    const sum = sums.get(key);
    if (sum === undefined) sums.set(key, { ...cell, instanceId: null, build: null, instanceRef: 0 });
    else sum.count += cell.count;
  }
  return { ...totals, cells: [...sums.values()] };
}
