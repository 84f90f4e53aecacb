import { knownRequests, share } from './share.js';

/**
 * What one matrix cell (one client, or client version, or instance × one extension id) says, decided here for the
 * API, every export and every alert rule:
 * - `negotiated`: negotiated on every request whose server's declaration is known;
 * - `partial`: negotiated on some of those requests, not on others;
 * - `client`: never negotiated; the client declared it (no server answering it offered the id);
 * - `server`: never negotiated; a server offered it, the client never declared it;
 * - `neither`: nobody declared it.
 */
type CellState = 'negotiated' | 'partial' | 'client' | 'server' | 'neither';

export interface CellCounts {
  clientDeclared: number;
  serverAdvertised: number;
  negotiated: number;
  /** Of `clientDeclared`, the requests answered before any server instance existed. */
  serverUnknown: number;
}

export interface CellFigures {
  state: CellState;
  /** The requests the shares are taken over (see analysis/share.ts). */
  known: number;
  negotiatedShare: number | null;
  /** Declared by the client (on requests a server saw) / advertised by the server, as shares of `known`. */
  clientShare: number | null;
  serverShare: number | null;
}

/** A cell's state and shares, from its counts and its row's requests. */
export function cellFigures(cell: CellCounts, row: { requests: number; serverUnknown: number }): CellFigures {
  const known = knownRequests(row.requests, row.serverUnknown);
  const clientKnown = Math.max(0, cell.clientDeclared - cell.serverUnknown);
  const state: CellState =
    cell.negotiated > 0 ? (cell.negotiated >= known ? 'negotiated' : 'partial') : clientKnown > 0 ? 'client' : cell.serverAdvertised > 0 ? 'server' : 'neither';
  return {
    state,
    known,
    negotiatedShare: share(cell.negotiated, known),
    clientShare: share(clientKnown, known),
    serverShare: share(cell.serverAdvertised, known),
  };
}
