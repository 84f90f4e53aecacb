import { isIP } from 'node:net';
import { parseArgs } from 'node:util';

/** How long the proxy waits for a client, each bounding what a slow or stalled client holds (upstream connections included). */
export interface ProxyDeadlines {
  /** A request's headers must be complete within this many ms of its first byte (else 408 and the connection closes). */
  headersMs: number;
  /** Its body must be complete within this many ms after that (else 408 or, once an answer began, the connection closes). */
  bodyMs: number;
  /** An idle kept-alive client connection is closed after this many ms. */
  idleMs: number;
}

/**
 * Defaults: headers 10 s (nginx's `client_header_timeout` is 60 s, but an MCP client sends its headers at once),
 * bodies 60 s, idle connections 65 s (longer than clients keep theirs, undici: 4 s, so a client never sends on a
 * connection the proxy is closing).
 */
export const DEFAULT_DEADLINES: ProxyDeadlines = { headersMs: 10_000, bodyMs: 60_000, idleMs: 65_000 };

/** Memory the proxy keeps to read bodies, across every request in flight (see `ByteBudget`). */
export const DEFAULT_READ_BUDGET_MIB = 32;

interface ProxyArguments {
  host: string;
  port: number;
  upstream: URL;
  deadlines: ProxyDeadlines;
  readBudgetBytes: number;
}

export type ParsedProxyArguments = { help: true } | { help: false; error: string } | ({ help: false; error?: undefined } & ProxyArguments);

function parseListen(value: string): { host: string; port: number } | undefined {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(value);
  if (match === null) return undefined;
  const port = Number(match[3]);
  if (port > 65535) return undefined;
  return { host: match[1] ?? match[2]!, port };
}

/** Whether `host` is this machine only: a loopback address, or `localhost`. */
function isLoopback(host: string): boolean {
  if (host.toLowerCase() === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1' || /^::ffff:127\./i.test(host);
  return false;
}

function parseUpstream(value: string): URL | string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `--upstream must be an http:// or https:// URL (e.g. http://127.0.0.1:3000), got '${value}'`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `--upstream must be an http:// or https:// URL, got the scheme '${url.protocol}' (the MCP server's Streamable HTTP address, e.g. http://127.0.0.1:3000)`;
  if (url.search !== '' || url.hash !== '') return `--upstream takes an origin and a base path, without a query or fragment, got '${value}'`;
  return url;
}

function seconds(name: string, value: string | undefined, fallback: number): number | string {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0 || parsed > 86_400) return `--${name} must be a number of seconds above 0, got '${value}'`;
  return Math.round(parsed * 1000);
}

/** `extscope proxy`'s arguments, each wrong one refused with its own message. */
export function parseProxyArguments(args: string[]): ParsedProxyArguments {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        listen: { type: 'string' },
        upstream: { type: 'string' },
        'allow-remote': { type: 'boolean' },
        'header-timeout': { type: 'string' },
        'body-timeout': { type: 'string' },
        'idle-timeout': { type: 'string' },
        'read-budget': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    return { help: false, error: (error as Error).message };
  }
  if (values.help === true) return { help: true };
  // Each value given is checked before what is missing is named: a wrong one is the mistake to fix first.
  const listen = values.listen === undefined ? undefined : parseListen(values.listen);
  if (values.listen !== undefined && listen === undefined) {
    const port = /^:?(\d{1,5})$/.exec(values.listen)?.[1];
    return {
      help: false,
      error:
        port === undefined
          ? `--listen must be HOST:PORT (e.g. 127.0.0.1:8080, [::1]:8080), got '${values.listen}'`
          : `--listen takes a host and a port: --listen 127.0.0.1:${port} (this machine only), got '${values.listen}'`,
    };
  }
  const upstream = values.upstream === undefined ? undefined : parseUpstream(values.upstream);
  if (typeof upstream === 'string') return { help: false, error: upstream };
  if (listen === undefined) return { help: false, error: '--listen HOST:PORT is required (where clients connect, e.g. --listen 127.0.0.1:8080)' };
  if (upstream === undefined) return { help: false, error: '--upstream URL is required (the MCP server, e.g. --upstream http://127.0.0.1:3000)' };
  if (!isLoopback(listen.host) && values['allow-remote'] !== true) {
    return {
      help: false,
      error: `--listen ${values.listen} is reachable from other machines, and the proxy relays to its upstream whoever connects: add --allow-remote to mean it (and put a gateway with authentication in front), or listen on 127.0.0.1`,
    };
  }
  const headersMs = seconds('header-timeout', values['header-timeout'], DEFAULT_DEADLINES.headersMs);
  const bodyMs = seconds('body-timeout', values['body-timeout'], DEFAULT_DEADLINES.bodyMs);
  const idleMs = seconds('idle-timeout', values['idle-timeout'], DEFAULT_DEADLINES.idleMs);
  for (const value of [headersMs, bodyMs, idleMs]) if (typeof value === 'string') return { help: false, error: value };
  const budget = values['read-budget'] === undefined ? DEFAULT_READ_BUDGET_MIB : Number(values['read-budget']);
  if (!Number.isInteger(budget) || budget < 1 || budget > 65_536)
    return { help: false, error: `--read-budget must be a whole number of MiB from 1, got '${values['read-budget']}'` };
  return {
    help: false,
    ...listen,
    upstream,
    deadlines: { headersMs: headersMs as number, bodyMs: bodyMs as number, idleMs: idleMs as number },
    readBudgetBytes: budget * 1024 * 1024,
  };
}
