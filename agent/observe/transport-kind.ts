import { TRANSPORT, type Transport } from '../../contract/index.js';

/**
 * How a server object is reached, told from the transport it connects to, of any SDK copy (bundled ones too, so by
 * shape, not by class): a transport over the process's own stdin or stdout serves one client session for the life
 * of the process (`stdio`); one that handles HTTP requests (`handleRequest` of the Streamable HTTP transport,
 * `handlePostMessage` of the older SSE one) serves many, long-lived (`http`). Anything else (an in-memory pair, a
 * custom transport) is not said.
 */
export function transportKind(transport: object): Transport | undefined {
  const fields = transport as { _stdin?: unknown; _stdout?: unknown; handleRequest?: unknown; handlePostMessage?: unknown };
  if (typeof fields.handleRequest === 'function' || typeof fields.handlePostMessage === 'function') return TRANSPORT.http;
  if (fields._stdin === process.stdin || fields._stdout === process.stdout) return TRANSPORT.stdio;
  return undefined;
}
