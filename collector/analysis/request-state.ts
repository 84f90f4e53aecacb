import { DECLARATION } from '../../contract/index.js';
import type { SeriesDims } from '../model/batches.js';

/**
 * What one request said about one extension id, the per-request form of a matrix cell's state (analysis/cell.ts):
 * - `negotiated`: both sides declared it;
 * - `client_only` / `server_only`: only the client declared it / only the answering server advertised it;
 * - `neither`: neither did (the id only appears because a `-32021` answer named it);
 * - `unknown`: answered before any server instance existed, so the server's side is not known. Such requests are
 *   left out of every share (analysis/share.ts), as their requests are by `server_declaration="unknown"`.
 */
export type RequestState = 'negotiated' | 'client_only' | 'server_only' | 'neither' | 'unknown';

export function requestState(dims: Pick<SeriesDims, 'serverDeclaration' | 'clientDeclared' | 'serverDeclared' | 'negotiated'>): RequestState {
  if (dims.serverDeclaration === DECLARATION.unknown) return 'unknown';
  const client = dims.clientDeclared === true;
  const server = dims.serverDeclared === true;
  if (dims.negotiated ?? (client && server)) return 'negotiated';
  return client ? 'client_only' : server ? 'server_only' : 'neither';
}
