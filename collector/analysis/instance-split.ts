import { DECLARATION } from '../../contract/index.js';
import { SeriesKind } from '../model/batches.js';
import type { InstanceCellTotal } from '../model/records.js';
import { type MatrixCell, instanceLabel, matrixCell } from './matrix.js';

/** One server instance's part of a cell: its requests (those of the cell's row) and the cell as it is there. */
interface InstancePart {
  service: string | null;
  instance: string | null;
  label: string;
  requests: number;
  /** Of `requests`, those answered before any server instance existed (left out of the shares). */
  serverUnknown: number;
  cell: MatrixCell;
}

/** The instances past the limit, summed: how many there were, their requests and their cell. */
interface OtherInstances {
  instances: number;
  requests: number;
  serverUnknown: number;
  cell: MatrixCell;
}

export interface InstanceSplit {
  /** The busiest instances first (by requests, then label), at most the limit. */
  instances: InstancePart[];
  /** Null when every instance is listed. */
  other: OtherInstances | null;
  /** Instances that answered the row's requests. */
  instancesTotal: number;
}

interface Counts {
  requests: number;
  serverUnknown: number;
  clientDeclared: number;
  serverAdvertised: number;
  negotiated: number;
  cellServerUnknown: number;
  required: number;
}

const zero = (): Counts => ({ requests: 0, serverUnknown: 0, clientDeclared: 0, serverAdvertised: 0, negotiated: 0, cellServerUnknown: 0, required: 0 });

function addInto(into: Counts, from: Counts): void {
  for (const key of Object.keys(into) as (keyof Counts)[]) into[key] += from[key];
}

const cellOf = (id: string, counts: Counts): MatrixCell =>
  matrixCell(
    id,
    {
      clientDeclared: counts.clientDeclared,
      serverAdvertised: counts.serverAdvertised,
      negotiated: counts.negotiated,
      serverUnknown: counts.cellServerUnknown,
      required: counts.required,
    },
    { requests: counts.requests, serverUnknown: counts.serverUnknown },
  );

/**
 * One matrix cell (the row's instance cells, already narrowed to its client, version, service or instance) split
 * per instance that answered: the same counts, state and shares as the cell's, each over that instance's requests.
 * At most `limit` instances, the busiest; the rest summed in `other`, so that a fleet of hundreds stays readable.
 */
export function instanceSplit(cells: readonly InstanceCellTotal[], extensionId: string, limit: number): InstanceSplit {
  const parts = new Map<string, { service: string | null; instance: string | null; counts: Counts }>();
  for (const cell of cells) {
    const key = JSON.stringify([cell.service, cell.instanceId]);
    let part = parts.get(key);
    if (part === undefined) parts.set(key, (part = { service: cell.service, instance: cell.instanceId, counts: zero() }));
    const counts = part.counts;
    const blind = cell.serverDeclaration === DECLARATION.unknown;
    if (cell.kind === SeriesKind.Requests) {
      counts.requests += cell.count;
      if (blind) counts.serverUnknown += cell.count;
      continue;
    }
    if (cell.extensionId !== extensionId) continue;
    if (cell.clientDeclared === true) {
      counts.clientDeclared += cell.count;
      if (blind) counts.cellServerUnknown += cell.count;
    }
    if (cell.serverDeclared === true) counts.serverAdvertised += cell.count;
    if (cell.negotiated === true) counts.negotiated += cell.count;
    if (cell.required === true) counts.required += cell.count;
  }
  const sorted = [...parts.values()]
    .map((part) => ({ ...part, label: instanceLabel(part.service, part.instance) }))
    .sort((a, b) => b.counts.requests - a.counts.requests || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
  const listed = sorted.slice(0, limit);
  const rest = sorted.slice(limit);
  let other: OtherInstances | null = null;
  if (rest.length > 0) {
    const summed = zero();
    for (const part of rest) addInto(summed, part.counts);
    other = { instances: rest.length, requests: summed.requests, serverUnknown: summed.serverUnknown, cell: cellOf(extensionId, summed) };
  }
  return {
    instances: listed.map(({ service, instance, label, counts }) => ({
      service,
      instance,
      label,
      requests: counts.requests,
      serverUnknown: counts.serverUnknown,
      cell: cellOf(extensionId, counts),
    })),
    other,
    instancesTotal: sorted.length,
  };
}
