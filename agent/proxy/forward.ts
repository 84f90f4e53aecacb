import type http from 'node:http';
import type https from 'node:https';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { KeptBytes } from '../wire/byte-budget.js';
import type { Valve } from './headers.js';
import type { RequestTap } from './proxied-exchange.js';

/** Request bodies up to this size are kept until the upstream answers, to resend them once (see {@link forward}). */
const RESEND_LIMIT = 1024 * 1024;
/** A kept-alive connection the upstream closed just as the request went out: the request never reached it. */
const STALE_CONNECTION = new Set(['ECONNRESET', 'EPIPE']);

export interface UpstreamRequest {
  client: typeof http | typeof https;
  agent: http.Agent;
  url: URL;
  path: string;
  headers: OutgoingHttpHeaders;
}

export interface ForwardedCall {
  /** The whole request was handed to the upstream's connection. */
  readonly sentWhole: boolean;
  abort(): void;
}

/**
 * Sends `request` upstream as it streams, with backpressure (the upstream's, through `valve`). A request sent on a
 * kept-alive connection that the upstream closed in the meantime (its idle timeout raced the request) fails before
 * any answer; it is sent again, once, on a fresh connection, when its whole body (small, as MCP POSTs are) was
 * kept, within `kept` (the proxy's shared budget). Anything else fails to `onFailure`. `tap` reads each chunk of
 * the body before it goes on, and its end (one listener on the request for both).
 */
export function forward(
  upstream: UpstreamRequest,
  request: IncomingMessage,
  valve: Valve,
  kept: KeptBytes,
  tap: RequestTap | undefined,
  onAnswer: (answer: IncomingMessage) => void,
  onFailure: (error: NodeJS.ErrnoException) => void,
): ForwardedCall {
  let chunks: Buffer[] | undefined = [];
  let keptBytes = 0;
  let ended = false;
  let aborted = false;
  let holding = false;
  let current: http.ClientRequest;
  const letGo = (): void => {
    chunks = undefined;
    kept.release();
  };
  // A plain data property, not a getter: an object literal with an accessor gets a map of its own, held from old
  // space, and that kept every exchange's objects alive through the young generation's collections (promoted,
  // then collected by the full ones: a third of the proxy's CPU per request went to it).
  const call = {
    sentWhole: false,
    abort: (): void => {
      if (aborted) return;
      aborted = true;
      letGo();
      if (holding) {
        holding = false;
        valve.release();
      }
      current.destroy();
    },
  };
  const send = (retry: boolean): http.ClientRequest => {
    const outgoing = upstream.client.request({
      protocol: upstream.url.protocol,
      hostname: upstream.url.hostname,
      port: upstream.url.port,
      method: request.method,
      path: upstream.path,
      headers: upstream.headers,
      agent: retry ? false : upstream.agent,
    });
    outgoing.once('response', (answer: IncomingMessage) => {
      letGo();
      onAnswer(answer);
    });
    outgoing.once('finish', () => (call.sentWhole = true));
    outgoing.once('error', (error: NodeJS.ErrnoException) => {
      if (aborted) return;
      const resend = !retry && outgoing.reusedSocket && STALE_CONNECTION.has(error.code ?? '') && ended && chunks !== undefined;
      if (!resend) {
        letGo();
        return onFailure(error);
      }
      current = send(true);
      for (const chunk of chunks!) current.write(chunk);
      current.end();
    });
    outgoing.on('drain', () => {
      if (!holding) return;
      holding = false;
      valve.release();
    });
    return outgoing;
  };
  current = send(false);
  request.on('data', (chunk: Buffer) => {
    tap?.requestChunk(chunk);
    if (chunks !== undefined) {
      keptBytes += chunk.length;
      if (keptBytes <= RESEND_LIMIT && kept.resize(keptBytes)) chunks.push(chunk);
      else letGo();
    }
    if (!current.write(chunk) && !holding) {
      holding = true;
      valve.hold();
    }
  });
  request.once('end', () => {
    ended = true;
    tap?.requestEnded();
    current.end();
  });
  return call;
}

/**
 * The upstream's answer on to the client as it comes, with the client's backpressure, each chunk handed to `read`
 * first. One 'data' listener does both: `pipe()` beside a reader's listener of its own cost a copy of the listener
 * list for every chunk, and more listeners to set up and take down per exchange than this.
 */
export function relay(answer: IncomingMessage, response: ServerResponse, read: ((chunk: Buffer) => void) | undefined): void {
  let paused = false;
  const resume = (): void => {
    paused = false;
    answer.resume();
  };
  answer.on('data', (chunk: Buffer) => {
    read?.(chunk);
    if (!response.write(chunk) && !paused) {
      paused = true;
      answer.pause();
      response.once('drain', resume);
    }
  });
  answer.once('end', () => response.end());
  answer.once('error', () => response.destroy());
  answer.once('aborted', () => response.destroy());
}
