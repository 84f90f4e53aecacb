import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';

/** Headers that belong to one hop, not to the message (RFC 9110 §7.6.1); each side's are its own. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
]);

export function single(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** The message's own headers, without this hop's (and any header the `Connection` header names). */
export function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const connection = single(headers, 'connection');
  // Usually one token (`keep-alive`, `close`), both hop-by-hop already: no set of names is made for it.
  const named = connection === undefined || !connection.includes(',') ? undefined : new Set(connection.split(',').map((token) => token.trim().toLowerCase()));
  const own = connection === undefined || named !== undefined ? undefined : connection.trim().toLowerCase();
  const forwarded: OutgoingHttpHeaders = {};
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP.has(name) || name === own || named?.has(name) === true) continue;
    forwarded[name] = value;
  }
  return forwarded;
}

/**
 * Pauses a stream while anyone holds it: the upstream's backpressure and the decoder's both hold a request body,
 * and it flows again only when neither does.
 */
export class Valve {
  private holds = 0;

  constructor(private readonly stream: Readable) {}

  hold(): void {
    if (this.holds++ === 0) this.stream.pause();
  }

  release(): void {
    if (this.holds > 0 && --this.holds === 0) this.stream.resume();
  }
}
