import net, { type AddressInfo, type Socket } from 'node:net';
import tls from 'node:tls';
import { TRANSPORT } from '../../contract/index.js';
import type { ServerAdvertisement } from '../observe/server-advertisement.js';
import { ByteBudget } from '../wire/byte-budget.js';
import type { WireRecording } from '../wire/connection.js';
import { MAX_FRAME_CHARS } from '../wire/frames.js';
import { HttpExchange, HttpSessions, advertised } from '../wire/http-exchange.js';
import { StandaloneAgent } from '../wire/standalone-agent.js';
import type { Valve } from './valve.js';
import type { Head } from './http-head.js';
import { DEFAULT_DEADLINES, DEFAULT_READ_BUDGET_MIB, type ProxyDeadlines, parseProxyArguments } from './options.js';
import { ProxiedExchange } from './proxied-exchange.js';
import { type RelayContext, RelayedConnection } from './relayed-connection.js';
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

/**
 * `extscope proxy`: a reverse proxy in front of one Streamable HTTP MCP server that relays bytes and reads them
 * as they pass ({@link RelayedConnection}). Each MCP POST is one {@link HttpExchange}, read the way the in-process
 * wire fallback reads one; 2025-era sessions keep their `initialize` per `Mcp-Session-Id`, and the server's map,
 * learned from its answers to `initialize` and `server/discover`, is assumed for later exchanges that carry none.
 * What is kept to read bodies is bounded per message and across all ({@link ByteBudget}). A request is counted
 * once the upstream answered it (began to), or as cancelled once the client left (or the proxy stopped) after the
 * upstream had it whole; one the upstream never saw (it is down: 502) counts nothing.
 */
export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  const { agent } = options;
  const upstream = new UpstreamTarget(options.upstream);
  const deadlines = { ...DEFAULT_DEADLINES, ...options.deadlines };
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const budget = new ByteBudget(options.readBudgetBytes ?? DEFAULT_READ_BUDGET_MIB * 1024 * 1024, MAX_FRAME_CHARS);
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
  // One options object for every exchange: the server assumed, the shared budget.
  const exchangeOptions = { server: (): ServerAdvertisement | undefined => upstreamServer, budget };
  const fail = (error: unknown): void => agent.pipeline.fail('proxy', error);
  const host = upstream.url.hostname.replace(/^\[(.*)\]$/, '$1');
  const secure = upstream.url.protocol === 'https:';
  const port = Number(upstream.url.port) || (secure ? 443 : 80);
  const connections = new Set<RelayedConnection>();

  const context: RelayContext & { now: number; ownUrl: string } = {
    upstream,
    deadlines,
    budget,
    log,
    ownUrl: '',
    now: Date.now(),
    connect: (): Socket => {
      if (!secure) return net.connect({ host, port, noDelay: true });
      const socket = tls.connect({ host, port, servername: net.isIP(host) === 0 ? host : undefined, ALPNProtocols: ['http/1.1'] });
      socket.setNoDelay(true);
      return socket;
    },
    flow: (head: Head, valve: Valve): ProxiedExchange =>
      new ProxiedExchange(
        new HttpExchange(sessions, recording, { sessionId: head.sessionId, protocolVersion: head.protocolVersion }, exchangeOptions),
        head.contentEncoding,
        valve,
        fail,
      ),
    closed: (connection) => void connections.delete(connection),
  };

  const server = net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => {
    connections.add(new RelayedConnection(socket, context));
  });
  // The deadlines are checked on one timer for every connection, a tenth of the shorter one apart (as Node's own
  // HTTP server checks its own), which also sets the clock the connections stamp their requests with.
  const sweep = setInterval(
    () => {
      const now = (context.now = Date.now());
      for (const connection of connections) connection.check(now);
    },
    Math.max(50, Math.min(1000, Math.floor(deadlines.headersMs / 10))),
  );
  sweep.unref();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
  } catch (error) {
    clearInterval(sweep);
    throw error;
  }
  const address = server.address() as AddressInfo;
  const listening = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  context.ownUrl = `http://${listening}:${address.port}`;
  return {
    url: context.ownUrl,
    close: async () => {
      clearInterval(sweep);
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const all = [...connections];
      // Asked before they stop: a recording settles as its exchange ends, or later while its body still decodes.
      const settled = all.flatMap((connection) => connection.flows()).map((flow) => flow.settled);
      for (const connection of all) connection.stop();
      // Bodies still decoding are read before their requests are counted: bounded, so a stop never hangs.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(settled), new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_GRACE_MS)))]);
      clearTimeout(timer);
      await closed;
    },
  };
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
