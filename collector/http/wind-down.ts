import { Server as NetServer } from 'node:net';
import type { FastifyInstance } from 'fastify';

export interface WindDown {
  /**
   * Shutdown begins: no new connection is accepted (a sender sees ECONNREFUSED and retries elsewhere or later),
   * and every answer from now on closes its connection, so a keep-alive client does not send another request on
   * a connection about to close.
   */
  begin(): void;
  /**
   * Resolves true once no request is in progress and none has begun for {@link QUIET_MS}, or false after
   * `graceMs`: the connections left then carried nothing since shutdown began, and none was about to.
   */
  settled(graceMs: number): Promise<boolean>;
}

/**
 * How long no request may have begun before the idle connections are closed. A keep-alive client that is sending
 * sends its next request within a round trip of its last answer, which now says `Connection: close`; one that has
 * sent nothing for this long is idle between exports (agents export every few seconds at most).
 */
const QUIET_MS = 500;
const POLL_MS = 25;

/**
 * How the HTTP server stops without resetting a request: node's `server.close()` (which fastify's `close()` calls)
 * destroys every connection it sees idle at once, and an idle keep-alive connection is where a client sends its
 * next export; closed under it, the export is reset instead of answered (seen: one reset per keep-alive connection
 * of a busy agent at every SIGTERM). So the listener stops first, every answer after that carries
 * `Connection: close`, and the server is closed only once the requests in progress have been answered and none has
 * begun for a moment; what is left is connections that carried nothing since shutdown began.
 */
export function windDown(app: FastifyInstance): WindDown {
  let closing = false;
  let active = 0;
  let lastBegun = 0;
  app.addHook('onRequest', async (_request, reply) => {
    active++;
    lastBegun = performance.now();
    reply.raw.once('close', () => active--);
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (closing) void reply.header('connection', 'close');
    return payload;
  });
  return {
    begin() {
      if (closing) return;
      closing = true;
      // net.Server's own close: stops accepting, leaves open connections alone (http.Server's closes the idle ones).
      if (app.server.listening) NetServer.prototype.close.call(app.server);
    },
    async settled(graceMs) {
      const end = performance.now() + graceMs;
      for (;;) {
        const now = performance.now();
        if (active === 0 && now - lastBegun >= QUIET_MS) return true;
        if (now >= end) return false;
        // Not unref'd: with the listener closed and no connection left, this wait is what keeps the process up.
        await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, end - now)));
      }
    },
  };
}
