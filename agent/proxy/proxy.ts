import http, { type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { TRANSPORT } from '../../contract/index.js';
import { HEADER_PROTOCOL_VERSION, HEADER_SESSION_ID } from '../mcp-protocol.js';
import type { ServerAdvertisement } from '../observe/server-advertisement.js';
import { ByteBudget } from '../wire/byte-budget.js';
import type { WireRecording } from '../wire/connection.js';
import { MAX_FRAME_CHARS } from '../wire/frames.js';
import { HttpExchange, HttpSessions, advertised } from '../wire/http-exchange.js';
import { StandaloneAgent } from '../wire/standalone-agent.js';
import { forward, relay } from './forward.js';
import { Valve, endToEnd, single } from './headers.js';
import { DEFAULT_DEADLINES, DEFAULT_READ_BUDGET_MIB, type ProxyDeadlines, parseProxyArguments } from './options.js';
import { LiveExchange, LiveExchanges } from './live-exchanges.js';
import { ProxiedExchange } from './proxied-exchange.js';
import { UpstreamTarget } from './upstream-target.js';

export const PROXY_USAGE = `Usage: extscope proxy --listen HOST:PORT --upstream URL [options]

A reverse proxy for a Streamable HTTP MCP server (any language) that records which extensions its clients
negotiate, exactly as the in-process agent does. Every request and answer passes unchanged (JSON and SSE
answers streamed as they come, headers, Mcp-Session-Id, compression); the Host header names the upstream, and
Location headers naming the upstream name the proxy. Put it directly in front of the server, behind any gateway.

Options:
  --listen HOST:PORT      Where clients (or the gateway) connect, e.g. 127.0.0.1:8080 (port 0: any free port)
  --upstream URL          The MCP server, e.g. http://127.0.0.1:3000; a path is put before every request's path
                          (http://h/base: /mcp goes to /base/mcp); user:password@ is sent as Basic authentication
                          when the client sends no Authorization of its own
  --allow-remote          Allow a --listen address other machines can reach (refused without it: the proxy
                          relays to its upstream whoever connects)
  --header-timeout SECS   A request's headers must arrive within this (default ${DEFAULT_DEADLINES.headersMs / 1000})
  --body-timeout SECS     Its body must arrive within this after that (default ${DEFAULT_DEADLINES.bodyMs / 1000})
  --idle-timeout SECS     An idle client connection is closed after this (default ${DEFAULT_DEADLINES.idleMs / 1000})
  --read-budget MIB       Memory kept to read bodies, across all requests (default ${DEFAULT_READ_BUDGET_MIB}); a body that
                          does not fit is forwarded unread and counted in extscope.agent.errors
  -h, --help              Show this help

Environment: the standard OTEL_* variables and EXTSCOPE_SPANS, EXTSCOPE_CAPTURE_SETTINGS, as for the agent.
`;

export interface ProxyOptions {
  host: string;
  port: number;
  upstream: URL;
  agent: StandaloneAgent;
  deadlines?: Partial<ProxyDeadlines>;
  /** Bytes kept to read bodies, across every exchange (default {@link DEFAULT_READ_BUDGET_MIB} MiB). */
  readBudgetBytes?: number;
  /** Where a line for the operator goes (a 502 and why): stderr by default. */
  log?: (line: string) => void;
}

export interface RunningProxy {
  url: string;
  /** Stops: requests the upstream has and never answered are counted as cancelled, every connection closes. */
  close(): Promise<void>;
}

/** How long {@link RunningProxy.close} waits for the last exchanges' bodies to be read before it gives up on them. */
const CLOSE_GRACE_MS = 2_000;
/** A `Host` header that can name the proxy in a rewritten `Location` (anything else: the listening address). */
const HOST_HEADER = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * `extscope proxy`: a reverse proxy in front of one Streamable HTTP MCP server. Each MCP POST is one
 * {@link HttpExchange}, read the way the in-process wire fallback reads one, from the bytes that pass; 2025-era
 * sessions keep their `initialize` per `Mcp-Session-Id`, and the server's map, learned from its answers to
 * `initialize` and `server/discover`, is assumed for later exchanges that carry none. Bodies stream to the
 * upstream as they come; what is kept to read them is bounded per message and across all ({@link ByteBudget}).
 * A request is counted once the upstream answered it (began to), or as cancelled once the client left (or the
 * proxy stopped) after the upstream had it whole; one the upstream never saw (it is down: 502) counts nothing.
 */
export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  const { agent } = options;
  const upstream = new UpstreamTarget(options.upstream);
  const deadlines = { ...DEFAULT_DEADLINES, ...options.deadlines };
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const budget = new ByteBudget(options.readBudgetBytes ?? DEFAULT_READ_BUDGET_MIB * 1024 * 1024, MAX_FRAME_CHARS);
  const client = upstream.url.protocol === 'https:' ? https : http;
  const upstreamAgent = new client.Agent({ keepAlive: true, maxFreeSockets: 256 });
  const sessions = new HttpSessions();
  /** What each exchange in flight does when the proxy stops. */
  const live = new LiveExchanges();
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
  // One options object for every exchange: the server assumed, the shared budget.
  const exchangeOptions = { server: (): ServerAdvertisement | undefined => upstreamServer, budget };
  const fail = (error: unknown): void => agent.pipeline.fail('proxy', error);
  let ownUrl = '';

  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    const path = upstream.path(request.url);
    if (path === undefined) {
      response.writeHead(400, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
      response.end('extscope proxy: the request target must be a path (or an absolute http URL, whose path is used)\n');
      return;
    }
    const { headers } = request;
    const valve = new Valve(request);
    const flow =
      request.method === 'POST'
        ? new ProxiedExchange(
            new HttpExchange(
              sessions,
              recording,
              { sessionId: single(headers, HEADER_SESSION_ID), protocolVersion: single(headers, HEADER_PROTOCOL_VERSION) },
              exchangeOptions,
            ),
            single(headers, 'content-encoding'),
            valve,
            fail,
          )
        : undefined;
    // A body that never ended (the client left, a deadline closed it): its requests are unknown, and whatever
    // waits on the body (an answer that already ended) settles now, giving back what was kept of it.
    if (flow !== undefined)
      request.once('close', () => {
        if (!request.complete) flow.bodyRead(undefined);
      });

    let answer: IncomingMessage | undefined;
    const onAnswer = (incoming: IncomingMessage): void => {
      answer = incoming;
      const status = incoming.statusCode ?? 502;
      flow?.answered(single(incoming.headers, 'content-encoding'));
      response.writeHead(status, incoming.statusMessage, locationsRewritten(endToEnd(incoming.headers), upstream, headers, ownUrl));
      // SSE: the headers reach the client now, before the first event (which may take a while). Any other answer's
      // headers go out with its first bytes, in one write, as a bare proxy sends them.
      if (isEventStream(incoming.headers['content-type'])) response.flushHeaders();
      // Read as it passes, before it is written on (the relay holds the flow: the upstream is trusted).
      relay(incoming, response, flow?.answerChunk);
    };
    const onFailure = (error: NodeJS.ErrnoException): void => {
      if (answer !== undefined) {
        response.destroy();
        return;
      }
      // The upstream never answered: what a gateway answers. Nothing is counted (it may never have seen it).
      flow?.dropped();
      const reason = error.code ?? error.message;
      log(`extscope proxy: 502 for ${request.method ?? '?'} ${request.url ?? ''}: upstream ${upstream.display} unreachable (${reason})`);
      if (!response.headersSent) {
        response.writeHead(502, { 'content-type': 'text/plain; charset=utf-8' });
        response.end(`extscope proxy: upstream ${upstream.origin} unreachable (${reason})\n`);
      } else {
        response.destroy();
      }
    };
    const call = forward(
      { client, agent: upstreamAgent, url: upstream.url, path, headers: upstreamHeaders(request, upstream) },
      request,
      valve,
      budget.account(),
      flow,
      onAnswer,
      onFailure,
    );
    // The client went away before its answer was complete (or the proxy stops): so does the upstream request. A
    // request the upstream has whole and never began to answer (a hung tool) is cancelled, as in-process; one whose
    // answer began ends with what came of it.
    const abandon = (): void => {
      // Its answer went out whole: the response's 'close' ends it (what the proxy stops is over already).
      if (answer !== undefined && response.writableFinished) return;
      if (answer === undefined) flow?.abandoned(call.sentWhole);
      else {
        flow?.answerEnded(false, answer.statusCode ?? 502, single(answer.headers, HEADER_SESSION_ID));
        answer.destroy();
      }
      call.abort();
    };
    const entry = new LiveExchange(abandon, flow);
    live.add(entry);
    // One listener for both ends of the response: written whole (the answer ended, complete or not), or not.
    response.once('close', () => {
      live.delete(entry);
      if (!response.writableFinished) abandon();
      else if (answer !== undefined) flow?.answerEnded(answer.complete, answer.statusCode ?? 502, single(answer.headers, HEADER_SESSION_ID));
    });
    request.once('error', () => call.abort());
  };

  const server = http.createServer(
    {
      keepAliveTimeout: deadlines.idleMs,
      headersTimeout: deadlines.headersMs,
      requestTimeout: deadlines.headersMs + deadlines.bodyMs,
      // Node checks the two deadlines above on this interval (30 s by default): a tenth of the shorter one.
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(deadlines.headersMs / 10))),
    },
    handle,
  );
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    const answer = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
    if (!socket.writable || answer?.headersSent === true) {
      socket.destroy();
      return;
    }
    const status = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request';
    socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  ownUrl = `http://${host}:${address.port}`;
  return {
    url: ownUrl,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const exchanges = live.all();
      for (const entry of exchanges) entry.stop();
      server.closeAllConnections();
      // Bodies still decoding are read before their requests are counted: bounded, so a stop never hangs.
      let timer: NodeJS.Timeout | undefined;
      const settled = exchanges.map((entry) => entry.flow?.settled);
      await Promise.race([Promise.all(settled), new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS)))]);
      clearTimeout(timer);
      await closed;
      upstreamAgent.destroy();
    },
  };
}

const isEventStream = (contentType: string | undefined): boolean => contentType !== undefined && /^\s*text\/event-stream\b/i.test(contentType);

/** The request's headers for the upstream: its own, `Host` naming the upstream, and the upstream's credentials if it has none. */
function upstreamHeaders(request: IncomingMessage, upstream: UpstreamTarget): OutgoingHttpHeaders {
  const headers = endToEnd(request.headers);
  headers['host'] = upstream.url.host;
  if (upstream.authorization !== undefined && headers['authorization'] === undefined) headers['authorization'] = upstream.authorization;
  return headers;
}

const LOCATIONS = ['location', 'content-location'];

/**
 * `Location` and `Content-Location` naming the upstream name the proxy instead (nginx's `proxy_redirect default`):
 * the proxy as the request's `Host` header named it, when that is a plain host (else its listening address).
 */
function locationsRewritten(headers: OutgoingHttpHeaders, upstream: UpstreamTarget, request: IncomingHttpHeaders, ownUrl: string): OutgoingHttpHeaders {
  for (const name of LOCATIONS) {
    const value = headers[name];
    if (typeof value !== 'string') continue;
    const host = single(request, 'host');
    headers[name] = upstream.rewrite(value, host !== undefined && HOST_HEADER.test(host) ? `http://${host}` : ownUrl);
  }
  return headers;
}

/** `extscope proxy --listen HOST:PORT --upstream URL`: runs until SIGINT or SIGTERM, then exports the last counts. */
export async function runProxy(args: string[]): Promise<number> {
  const parsed = parseProxyArguments(args);
  if (parsed.help) {
    process.stdout.write(PROXY_USAGE);
    return 0;
  }
  if (parsed.error !== undefined) {
    process.stderr.write(`extscope proxy: ${parsed.error} (extscope proxy --help shows every option)\n`);
    return 2;
  }
  const agent = new StandaloneAgent(TRANSPORT.http);
  let proxy: RunningProxy;
  try {
    proxy = await startProxy({ ...parsed, agent });
  } catch (error) {
    process.stderr.write(`extscope proxy: cannot listen on ${parsed.host}:${parsed.port}: ${(error as Error).message}\n`);
    return 1;
  }
  const display = new UpstreamTarget(parsed.upstream).display;
  process.stderr.write(`extscope proxy: listening on ${proxy.url}, forwarding to ${display}\n`);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  process.stderr.write(`extscope proxy: ${signal}: exporting the last counts\n`);
  await proxy.close();
  await agent.shutdown();
  return 0;
}
