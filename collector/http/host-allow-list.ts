import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';

/** The names a loopback collector answers to: what agents, browsers and probes on this machine send. */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** Probes an orchestrator sends by the pod's address (kubelet: `Host: <pod IP>:<port>`); they reveal nothing. */
const PROBE_PATHS = new Set(['/healthz', '/readyz']);

export interface HostPolicy {
  /** Names (and addresses) accepted in `Host`, any port; undefined: any `Host`. */
  names: ReadonlySet<string> | undefined;
  /** Paths open whatever the `Host` (health probes, beyond loopback only). */
  openPaths: ReadonlySet<string>;
}

/**
 * Which `Host` values the collector answers. DNS rebinding points a name of the attacker's (`evil.example`) at
 * 127.0.0.1, so that a page of that name reaches a loopback collector as "same origin"; its requests then carry
 * `Host: evil.example`, and only a check of that header tells them apart. On loopback only loopback names (any
 * 127.x address, `localhost`, `[::1]`) and the configured ones pass, on every route. Beyond loopback tokens are
 * required (config.ts) and a rebinding page has none; there the configured names pass (the probes' paths stay
 * open, kubelet probes by pod address), and with none configured any `Host` does.
 */
export function hostPolicy(loopback: boolean, configured: readonly string[] | undefined): HostPolicy {
  const extra = (configured ?? []).map(normalName).filter((name) => name !== '');
  if (loopback) return { names: new Set([...LOOPBACK_NAMES, ...extra]), openPaths: new Set() };
  if (extra.length === 0) return { names: undefined, openPaths: new Set() };
  return { names: new Set([...LOOPBACK_NAMES, ...extra]), openPaths: PROBE_PATHS };
}

/** A configured name as `Host` compares: lower case, IPv6 in brackets, no port. */
function normalName(name: string): string {
  const trimmed = name.trim().toLowerCase();
  if (trimmed.includes(':') && !trimmed.startsWith('[') && trimmed.split(':').length > 2) return `[${trimmed}]`;
  return hostnameOf(trimmed);
}

/** The name in a `Host` value, without its port: `[::1]:4318` → `[::1]`, `localhost:4318` → `localhost`; bare `::1` → `[::1]`. */
function hostnameOf(host: string): string {
  const value = host.trim().toLowerCase();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    return end === -1 ? value : value.slice(0, end + 1);
  }
  const colons = value.split(':').length - 1;
  if (colons > 1) return `[${value}]`;
  return colons === 1 ? value.slice(0, value.indexOf(':')) : value;
}

function allowed(policy: HostPolicy, host: string | undefined): boolean {
  // Without Host (HTTP/1.0; node refuses HTTP/1.1 without one) the request names no site: a browser always sends it.
  if (policy.names === undefined || host === undefined) return true;
  const name = hostnameOf(host);
  return policy.names.has(name) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}

/**
 * onRequest hook of the whole app, before any route and any token: a `Host` the collector does not answer to is
 * refused 421 (Misdirected Request) with what it does answer to.
 */
export function hostGuard(policy: HostPolicy): onRequestAsyncHookHandler {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (allowed(policy, request.headers.host)) return;
    if (policy.openPaths.has(request.url.split('?', 1)[0] ?? '')) return;
    const names = [...(policy.names ?? [])].join(', ');
    await reply
      .code(421)
      .header('connection', 'close')
      .send({
        statusCode: 421,
        code: 'EXTSCOPE_HOST_NOT_ALLOWED',
        error: 'Misdirected Request',
        message: `Host ${JSON.stringify(request.headers.host)} is not a name of this collector: it answers to ${names} and 127.x addresses (add names with EXTSCOPE_ALLOWED_HOSTS or --allowed-hosts)`,
      });
  };
}
