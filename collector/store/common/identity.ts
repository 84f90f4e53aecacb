import crypto from 'node:crypto';
import type { InstanceIdentity, SeriesDims } from '../../model/batches.js';
import { EXTENSION_CELL_COLUMNS, EXTENSION_INSTANCE_CELL_COLUMNS, REQUEST_CELL_COLUMNS, REQUEST_INSTANCE_CELL_COLUMNS, SERIES_COLUMNS } from './columns.js';

/**
 * Stored identities: the first 16 bytes of SHA-256 over a canonical text of the identifying values.
 *
 * Series and cell keys are positional over the contract's table order (every value they hash is also stored in
 * its own column, so they can always be recomputed from the rows). Stream keys are not: they hash every point
 * attribute, most of which are not stored, which is why they are by attribute name (see {@link streamKey}).
 */
export function identityHash(text: string): Buffer {
  return sha256(text).subarray(0, 16);
}

/**
 * One-shot where the runtime has it (Node 20.12 and later): no hash object per call, which an export pays once per
 * point. `typeof` because the engines field allows Node 20.6, which has only `createHash`.
 */
const sha256: (text: string) => Buffer =
  typeof (crypto as { hash?: unknown }).hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'buffer')
    : (text) => crypto.createHash('sha256').update(text).digest();

export function instanceKey(resource: Pick<InstanceIdentity, 'service' | 'instanceId'>): string {
  return JSON.stringify([resource.service, resource.instanceId]);
}

/**
 * A stream: resource, scope, metric and temporality, then every point attribute as sorted `name=typed value`
 * pairs. An attribute a sender adds changes only the identity of the streams that carry it.
 */
export function streamKey(streamScope: string, streamAttributes: string): string {
  return `${streamScope}\u0001${streamAttributes}`;
}

export const CellScope = { Service: 0, AllServices: 1 } as const;
export type CellScope = (typeof CellScope)[keyof typeof CellScope];

/**
 * The matrix projection of a series: what the matrix can group or filter by, nothing else. For the
 * all-services scope the service is left out (null).
 */
export function cellKey(scope: CellScope, service: string | null, dims: Readonly<SeriesDims>): string {
  const owner = scope === CellScope.Service ? service : null;
  const columns = dims.kind === 0 ? REQUEST_CELL_COLUMNS : EXTENSION_CELL_COLUMNS;
  return JSON.stringify([scope, dims.kind, owner, ...columns.map((column) => dims[column.key])]);
}

/** The instance cell of a series: its instance and the columns its kind keeps (columns.ts), without its client. */
export function instanceCellKey(instanceRef: number, dims: Readonly<SeriesDims>): string {
  const columns = dims.kind === 0 ? REQUEST_INSTANCE_CELL_COLUMNS : EXTENSION_INSTANCE_CELL_COLUMNS;
  return JSON.stringify([instanceRef, dims.kind, ...columns.map((column) => dims[column.key])]);
}

export function seriesKey(instanceRef: number, dims: Readonly<SeriesDims>): string {
  return JSON.stringify([instanceRef, dims.kind, ...SERIES_COLUMNS.map((column) => dims[column.key])]);
}

export function exampleCellKey(service: string | null, clientName: string | null, clientVersion: string | null, extensionId: string | null): string {
  return JSON.stringify([service, clientName, clientVersion, extensionId]);
}
