import diagnosticsChannel from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HEADER_PROTOCOL_VERSION, HEADER_SESSION_ID } from '../mcp-protocol.js';
import { HttpExchange, HttpSessions, carriesRequests } from './http-exchange.js';
import type { WireHost } from './fallback.js';

export interface HttpWireTap {
  stop(): void;
}

/** Published by `node:http` for every request a server receives, before its `request` event. */
const REQUEST_START = 'http.server.request.start';
/** Requests looked at for MCP traffic while an SDK copy records, before the tap unsubscribes. */
const SENTINEL_BUDGET = 100;
interface RequestStart {
  request: IncomingMessage;
  response: ServerResponse;
}

type Method = (this: unknown, ...args: unknown[]) => unknown;

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** An MCP streamable HTTP request, by its headers alone (a client must accept both JSON and SSE answers). */
function looksLikeMcp(request: IncomingMessage): boolean {
  if (header(request, HEADER_PROTOCOL_VERSION) !== undefined || header(request, HEADER_SESSION_ID) !== undefined) return true;
  const accept = header(request, 'accept') ?? '';
  return request.method === 'POST' && accept.includes('text/event-stream') && accept.includes('application/json');
}

/** The session id a response sets, whether through `setHeader` or the headers given to `writeHead`. */
function sessionIdOf(response: ServerResponse, writeHeadArgs: unknown[] | undefined): string | undefined {
  const set = response.getHeader(HEADER_SESSION_ID);
  if (typeof set === 'string') return set;
  const headers = writeHeadArgs?.find((arg) => typeof arg === 'object' && arg !== null);
  if (Array.isArray(headers)) {
    const flat = headers.flat() as unknown[];
    for (let i = 0; i + 1 < flat.length; i += 2) if (String(flat[i]).toLowerCase() === HEADER_SESSION_ID) return String(flat[i + 1]);
    return undefined;
  }
  if (headers !== undefined) {
    for (const [key, value] of Object.entries(headers as Record<string, unknown>))
      if (key.toLowerCase() === HEADER_SESSION_ID && typeof value === 'string') return value;
  }
  return undefined;
}

/**
 * The HTTP side of the wire fallback, through `node:http`'s diagnostics channel (no function of `node:http`
 * is replaced). For each POST it tees the body where the parser hands it over (`request.push`) and the answer
 * where the app writes it (`response.write`/`end`, `writeHead` for the session header), calling each original
 * with the same arguments. One HTTP exchange is one conversation; a 2025-era session (`Mcp-Session-Id`) keeps
 * its `initialize` and its server across exchanges, as the server instance behind it does. A stateless
 * exchange knows only what it carries itself.
 */
export function tapHttpServers(host: WireHost): HttpWireTap {
  const sessions = new HttpSessions();
  let sentinelBudget = SENTINEL_BUDGET;
  let noted = false;
  let subscribed = true;

  const stop = (): void => {
    if (!subscribed) return;
    subscribed = false;
    diagnosticsChannel.unsubscribe(REQUEST_START, onRequest);
  };

  const noteMcp = (): void => {
    if (noted) return;
    noted = true;
    host.mcpSeen('http');
  };

  function onRequest(message: unknown): void {
    try {
      const { request, response } = message as RequestStart;
      if (host.sdkObserved()) {
        // An SDK copy records: look at a few requests for MCP traffic, then get out of the way for good.
        if (looksLikeMcp(request)) noteMcp();
        if (noted || --sentinelBudget <= 0) stop();
        return;
      }
      // Only what an MCP client sends (MCP headers, or the Accept the streamable HTTP transport requires): the
      // other POSTs of the application (uploads, webhooks) are never buffered.
      if (request.method !== 'POST' || !looksLikeMcp(request)) return;
      observeExchange(request, response);
    } catch (error) {
      host.pipeline.fail('wire_http', error);
    }
  }

  function observeExchange(request: IncomingMessage, response: ServerResponse): void {
    const exchange = new HttpExchange(
      sessions,
      host,
      { sessionId: header(request, HEADER_SESSION_ID), protocolVersion: header(request, HEADER_PROTOCOL_VERSION) },
      { active: () => !host.sdkObserved() },
    );
    let bodyDone = false;
    let writeHeadArgs: unknown[] | undefined;

    const settle = (finished: boolean): void => exchange.settle(finished, response.statusCode, sessionIdOf(response, writeHeadArgs));

    const push = request.push;
    request.push = function observedPush(this: unknown, chunk: unknown, encoding?: unknown) {
      try {
        if (!bodyDone) {
          if (chunk === null) {
            bodyDone = true;
            const parsed = exchange.requestBody();
            if (carriesRequests(parsed)) noteMcp();
            exchange.received(parsed);
          } else {
            exchange.requestChunk(chunk, encoding);
          }
        }
      } catch (error) {
        host.pipeline.fail('wire_http', error);
      }
      return (push as Method).apply(this, arguments as unknown as unknown[]);
    } as typeof request.push;

    const { writeHead, write, end } = response;
    response.writeHead = function observedWriteHead(this: unknown) {
      writeHeadArgs = [...(arguments as unknown as unknown[])];
      return (writeHead as Method).apply(this, arguments as unknown as unknown[]);
    } as typeof response.writeHead;
    response.write = function observedWrite(this: unknown, chunk: unknown, encoding?: unknown) {
      try {
        exchange.answerChunk(chunk, typeof encoding === 'function' ? undefined : encoding);
      } catch (error) {
        host.pipeline.fail('wire_http', error);
      }
      return (write as Method).apply(this, arguments as unknown as unknown[]);
    } as typeof response.write;
    response.end = function observedEnd(this: unknown, chunk?: unknown, encoding?: unknown) {
      try {
        if (chunk !== undefined && typeof chunk !== 'function') exchange.answerChunk(chunk, typeof encoding === 'function' ? undefined : encoding);
      } catch (error) {
        host.pipeline.fail('wire_http', error);
      }
      return (end as Method).apply(this, arguments as unknown as unknown[]);
    } as typeof response.end;
    response.once('finish', () => {
      try {
        settle(true);
      } catch (error) {
        host.pipeline.fail('wire_http', error);
      }
    });
    response.once('close', () => {
      try {
        settle(false);
      } catch (error) {
        host.pipeline.fail('wire_http', error);
      }
    });
  }

  diagnosticsChannel.subscribe(REQUEST_START, onRequest);
  return { stop };
}
