import { createHash } from 'node:crypto';
import type { ResourceIdentity, SeriesDims } from '../../processing/points.js';

/** 16 bytes of SHA-256: the stored identity of instances, cells, series and streams. */
export function identityHash(text: string): Buffer {
  return createHash('sha256').update(text).digest().subarray(0, 16);
}

export function instanceKey(resource: ResourceIdentity): string {
  return JSON.stringify([resource.service, resource.instanceId]);
}

export const CellScope = { Service: 0, AllServices: 1 } as const;
export type CellScope = (typeof CellScope)[keyof typeof CellScope];

/**
 * The matrix projection of a series: what the matrix can group or filter by, nothing else. For the
 * all-services scope the service is left out (null).
 */
export function cellKey(scope: CellScope, service: string | null, dims: SeriesDims): string {
  const owner = scope === CellScope.Service ? service : null;
  return dims.kind === 0
    ? JSON.stringify([scope, 0, owner, dims.clientName, dims.clientVersion, dims.clientDeclaration])
    : JSON.stringify([scope, 1, owner, dims.clientName, dims.clientVersion, dims.extensionId, dims.clientDeclared, dims.serverDeclared, dims.negotiated]);
}

export function seriesKey(instanceRef: number, dims: SeriesDims): string {
  return JSON.stringify([
    instanceRef,
    dims.kind,
    dims.serverName,
    dims.serverVersion,
    dims.method,
    dims.era,
    dims.protocolVersion,
    dims.clientName,
    dims.clientVersion,
    dims.clientDeclaration,
    dims.serverDeclaration,
    dims.outcome,
    dims.statusCode,
    dims.extensionId,
    dims.clientDeclared,
    dims.serverDeclared,
    dims.negotiated,
    dims.required,
  ]);
}

export function exampleCellKey(service: string | null, clientName: string | null, clientVersion: string | null, extensionId: string | null): string {
  return JSON.stringify([service, clientName, clientVersion, extensionId]);
}

/** Booleans as SQLite stores them. */
export function flag(value: boolean | null): number | null {
  return value === null ? null : value ? 1 : 0;
}
