import http, { type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import zlib from 'node:zlib';
import { HEADER_PROTOCOL_VERSION, HEADER_SESSION_ID } from '../mcp-protocol.js';
import { HttpExchange, HttpSessions, advertised } from '../wire/http-exchange.js';
import type { WireRecording } from '../wire/connection.js';
import type { ServerAdvertisement } from '../observe/server-advertisement.js';
import { StandaloneAgent } from '../wire/standalone-agent.js';

export const PROXY_USAGE = `Usage: extscope proxy --listen HOST:PORT --upstream URL

A reverse proxy for a Streamable HTTP MCP server (any language) that records which extensions its clients
negotiate, exactly as the in-process agent does. Every request and answer passes unchanged (JSON and SSE
answers streamed as they come, headers, Mcp-Session-Id, compression); paths are forwarded as they are, and the
Host header names the upstream. Put it directly in front of the server, behind any gateway.

Options:
  --listen HOST:PORT  Where clients (or the gateway) connect, e.g. 127.0.0.1:8080 (port 0: any free port)
  --upstream URL      The MCP server's origin, e.g. http://127.0.0.1:3000
  -h, --help          Show this help

Environment: the standard OTEL_* variables and EXTSCOPE_SPANS, EXTSCOPE_CAPTURE_SETTINGS, as for the agent.
`;

/** Headers that belong to one hop, not to the message (RFC 9110 §7.6.1); each side's are its own. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-authenticate']);

export interface ProxyOptions {
  host: string;
  port: number;
  upstream: URL;
  agent: StandaloneAgent;
}

export interface RunningProxy {
  url: string;
  close(): Promise<void>;
}

function single(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

/** The message's own headers, without this hop's (and any header the `Connection` header names). */
function endToEnd(headers: IncomingHttpHeaders, host?: string): OutgoingHttpHeaders {
  const named = new Set((single(headers, 'connection') ?? '').split(',').map((token) => token.trim().toLowerCase()));
  const forwarded: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    forwarded[name] = value;
  }
  if (host !== undefined) forwarded['host'] = host;
  return forwarded;
}

/**
 * Hands a body's bytes to `onChunk` decoded, when they are compressed (`gzip`, `deflate`, `br`): only what the
 * proxy reads is decoded, the bytes it forwards stay as they are. `end` resolves when all was handed over.
 */
function decodedReader(contentEncoding: string | undefined, onChunk: (chunk: Buffer) => void): { write(chunk: Buffer): void; end(): Promise<void> } {
  const coding = contentEncoding?.trim().toLowerCase();
  const decoder = coding === 'gzip' || coding === 'x-gzip' ? zlib.createGunzip() : coding === 'deflate' ? zlib.createInflate() : coding === 'br' ? zlib.createBrotliDecompress() : undefined;
  if (decoder === undefined) return { write: onChunk, end: () => Promise.resolve() };
  decoder.on('data', onChunk);
  const done = new Promise<void>((resolve) => {
    decoder.once('end', resolve);
    // A body that does not decode: what was read stays read, the rest is not looked at.
    decoder.once('error', () => resolve());
  });
  return {
    write: (chunk) => void decoder.write(chunk),
    end: () => {
      decoder.end();
      return done;
    },
  };
}

/**
 * `extscope proxy`: a reverse proxy in front of one Streamable HTTP MCP server. Each MCP POST is one
 * {@link HttpExchange}, read the way the in-process wire fallback reads one, from the bytes that pass; 2025-era
 * sessions keep their `initialize` per `Mcp-Session-Id`, and the server's map, learned from its answers to
 * `initialize` and `server/discover`, is assumed for later exchanges that carry none. A request is counted only
 * once the upstream answered it (began to): one the upstream never saw (it is down: 502) counts nothing.
 */
export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  const { upstream, agent } = options;
  const client = upstream.protocol === 'https:' ? https : http;
  const upstreamAgent = new client.Agent({ keepAlive: true, maxFreeSockets: 256 });
  const sessions = new HttpSessions();
  let upstreamServer: ServerAdvertisement | undefined;
  // The server's own answers to initialize and server/discover say what it advertises: assumed from then on
  // for the exchanges that carry nothing about it (a stateless 2026-07-28 request, a 2025-era one without session).
  const recording: WireRecording = {
    pipeline: agent.pipeline,
    advertisements: agent.advertisements,
    identify: (identity) => agent.identify(identity),
    announce: (server) => {
      upstreamServer = advertised(server) ?? upstreamServer;
      agent.announce(server);
    },
  };
  const knownServer = (): ServerAdvertisement | undefined => upstreamServer;

  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    const observed = request.method === 'POST';
    const exchange = observed
      ? new HttpExchange(sessions, recording, { sessionId: single(request.headers, HEADER_SESSION_ID), protocolVersion: single(request.headers, HEADER_PROTOCOL_VERSION) }, { server: knownServer })
      : undefined;
    const guard = (work: () => void): void => {
      try {
        work();
      } catch (error) {
        agent.pipeline.fail('proxy', error);
      }
    };

    let body: unknown;
    let bodyRead = false;
    let upstreamAnswered = false;
    const deliver = (): void => {
      if (bodyRead && upstreamAnswered) guard(() => exchange?.received(body));
    };
    const requestReader = exchange && decodedReader(single(request.headers, 'content-encoding'), (chunk) => guard(() => exchange.requestChunk(chunk)));
    if (requestReader !== undefined) {
      request.on('data', (chunk: Buffer) => guard(() => requestReader.write(chunk)));
      request.once('end', () => {
        void requestReader.end().then(() => {
          guard(() => {
            body = exchange!.requestBody();
            bodyRead = true;
            deliver();
          });
        });
      });
    }

    const onAnswer = (answer: IncomingMessage): void => {
      upstreamAnswered = true;
      deliver();
      const status = answer.statusCode ?? 502;
      response.writeHead(status, answer.statusMessage, endToEnd(answer.headers));
      // SSE: every event reaches the client as it comes (no Nagle delay on small writes).
      response.flushHeaders();
      const answerReader = exchange && decodedReader(single(answer.headers, 'content-encoding'), (chunk) => guard(() => exchange.answerChunk(chunk)));
      if (answerReader !== undefined) answer.on('data', (chunk: Buffer) => guard(() => answerReader.write(chunk)));
      answer.pipe(response);
      const sessionId = single(answer.headers, HEADER_SESSION_ID);
      const settle = (finished: boolean): void => {
        if (exchange === undefined || answerReader === undefined) return;
        void answerReader.end().then(() => guard(() => exchange.settle(finished, status, sessionId)));
      };
      response.once('finish', () => settle(answer.complete));
      response.once('close', () => {
        if (!response.writableFinished) {
          answer.destroy();
          settle(false);
        }
      });
      answer.once('error', () => response.destroy());
      answer.once('aborted', () => response.destroy());
    };
    const onFailure = (error: NodeJS.ErrnoException): void => {
      if (upstreamAnswered) {
        response.destroy();
        return;
      }
      // The upstream never answered: what a gateway answers. Nothing is counted (it may never have seen it).
      if (!response.headersSent) {
        response.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' });
        response.end(`extscope proxy: upstream ${upstream.origin} unreachable (${error.code ?? error.message})\n`);
      } else {
        response.destroy();
      }
    };
    const call = forward(client, upstreamAgent, upstream, request, onAnswer, onFailure);
    // The client went away before its answer was complete: so does the upstream request.
    response.once('close', () => {
      if (!response.writableFinished) call.abort();
    });
    request.once('error', () => call.abort());
  };

  // Idle client connections are kept longer than clients keep them (undici: 4 s), so a client never sends on a
  // connection the proxy is closing; an idle connection costs a few KB.
  const server = http.createServer({ keepAliveTimeout: IDLE_CLIENT_CONNECTION_MS, headersTimeout: IDLE_CLIENT_CONNECTION_MS + 1000 }, handle);
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      upstreamAgent.destroy();
    },
  };
}

/** How long an idle client connection is kept open. */
const IDLE_CLIENT_CONNECTION_MS = 65_000;
/** Request bodies up to this size are kept until the upstream answers, to resend them once (see {@link forward}). */
const RESEND_LIMIT = 1024 * 1024;
/** A kept-alive connection the upstream closed just as the request went out: the request never reached it. */
const STALE_CONNECTION = new Set(['ECONNRESET', 'EPIPE']);

/**
 * Sends `request` upstream as it streams, with backpressure both ways. A request sent on a kept-alive
 * connection that the upstream closed in the meantime (its idle timeout raced the request) fails before any
 * answer; it is sent again, once, on a fresh connection, when its whole body (small, as MCP POSTs are) was
 * kept. Anything else fails to `onFailure`.
 */
function forward(
  client: typeof http | typeof https,
  agent: http.Agent,
  upstream: URL,
  request: IncomingMessage,
  onAnswer: (answer: IncomingMessage) => void,
  onFailure: (error: NodeJS.ErrnoException) => void,
): { abort(): void } {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let ended = false;
  let aborted = false;
  let current: http.ClientRequest;
  const send = (retry: boolean): http.ClientRequest => {
    const outgoing = client.request({
      protocol: upstream.protocol,
      hostname: upstream.hostname,
      port: upstream.port,
      method: request.method,
      path: request.url,
      headers: endToEnd(request.headers, upstream.host),
      agent: retry ? false : agent,
    });
    outgoing.once('response', onAnswer);
    outgoing.once('error', (error: NodeJS.ErrnoException) => {
      if (aborted) return;
      const resend = !retry && outgoing.reusedSocket && STALE_CONNECTION.has(error.code ?? '') && ended && keptBytes <= RESEND_LIMIT;
      if (!resend) return onFailure(error);
      current = send(true);
      for (const chunk of kept) current.write(chunk);
      current.end();
    });
    outgoing.on('drain', () => request.resume());
    return outgoing;
  };
  current = send(false);
  request.on('data', (chunk: Buffer) => {
    if (keptBytes <= RESEND_LIMIT) kept.push(chunk);
    keptBytes += chunk.length;
    if (keptBytes > RESEND_LIMIT) kept.length = 0;
    if (!current.write(chunk)) request.pause();
  });
  request.once('end', () => {
    ended = true;
    current.end();
  });
  return {
    abort: () => {
      aborted = true;
      current.destroy();
    },
  };
}

function parseListen(value: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(value);
  if (match === null) return undefined;
  const port = Number(match[3]);
  if (port > 65535) return undefined;
  return { host: match[1] ?? match[2]!, port };
}

/** `extscope proxy --listen HOST:PORT --upstream URL`: runs until SIGINT or SIGTERM, then exports the last counts. */
export async function runProxy(args: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ args, options: { listen: { type: 'string' }, upstream: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: false }));
  } catch (error) {
    process.stderr.write(`extscope proxy: ${(error as Error).message}\n\n${PROXY_USAGE}`);
    return 2;
  }
  if (values.help === true) {
    process.stdout.write(PROXY_USAGE);
    return 0;
  }
  const listen = values.listen === undefined ? undefined : parseListen(values.listen);
  let upstream: URL | undefined;
  try {
    upstream = values.upstream === undefined ? undefined : new URL(values.upstream);
  } catch {
    upstream = undefined;
  }
  if (listen === undefined || upstream === undefined || (upstream.protocol !== 'http:' && upstream.protocol !== 'https:')) {
    process.stderr.write(`extscope proxy: --listen HOST:PORT and --upstream http(s)://… are required\n\n${PROXY_USAGE}`);
    return 2;
  }
  const agent = new StandaloneAgent();
  let proxy: RunningProxy;
  try {
    proxy = await startProxy({ ...listen, upstream, agent });
  } catch (error) {
    process.stderr.write(`extscope proxy: cannot listen on ${values.listen}: ${(error as Error).message}\n`);
    return 1;
  }
  process.stderr.write(`extscope proxy: listening on ${proxy.url}, forwarding to ${upstream.origin}\n`);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  process.stderr.write(`extscope proxy: ${signal}: exporting the last counts\n`);
  await proxy.close();
  await agent.shutdown();
  return 0;
}
