/** The matrix row of requests that named no client (as the collector's analysis labels it). */
const UNKNOWN_CLIENT = '(unknown client)';

/** What that row holds, for its tooltip: it is mostly not an unknown client, but unnamed requests. */
const UNKNOWN_CLIENT_EXPLANATION =
  'Requests that carried no client name: mostly 2025-era clients on stateless HTTP, whose requests after ' +
  'initialize reach server instances that never saw their initialize (their declaration is unknown too). ' +
  'HTTP sessions, stdio, and the 2026-07-28 revision name every request. See docs/instrumenting.md.';

/** The row label's tooltip: the client's name, or for the unnamed row what it holds. */
export function clientTitle(client: string): string {
  return client === UNKNOWN_CLIENT ? `${UNKNOWN_CLIENT}: ${UNKNOWN_CLIENT_EXPLANATION}` : client;
}
