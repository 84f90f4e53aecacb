import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { z } from 'zod';
import { MINUTE_NS, extensionPoint, metricsRequest, msToNs, postMetrics, requestPoint } from '../../collector/helpers/otlp.js';
import { ROOT, agentEnv, fixture, nodeArgs, rawStdioExchange } from '../../support/processes.js';

/**
 * The fleet the browser tests look at: real MCP servers run with `node --import @extscope/agent/register`, real SDK
 * clients with known extension maps, and one hand-built OTLP export of older traffic for "what changed".
 */

export const TASKS = 'io.modelcontextprotocol/tasks';
export const SEARCH = 'com.example/search';
export const REPLAY = 'com.example/replay';
export const CAPS = 'io.modelcontextprotocol/clientCapabilities';
export const EVIL_CLIENT = 'com.evil/<img src=x onerror=alert(1)>';
export const EVIL_SERVICE = '<script>alert(2)</script>';

export interface Negotiated {
  alpha: string | undefined;
  beta: string | undefined;
  gamma: string | undefined;
}

function server(collectorUrl: string, service: string, instance: string, extensions: Record<string, unknown>): StdioClientTransport {
  return new StdioClientTransport({
    command: process.execPath,
    args: nodeArgs(fixture('dashboard-stdio.mjs'), true),
    cwd: ROOT,
    env: agentEnv(collectorUrl, {
      OTEL_SERVICE_NAME: service,
      OTEL_RESOURCE_ATTRIBUTES: `service.instance.id=${instance}`,
      FIXTURE_EXTENSIONS: JSON.stringify(extensions),
    }),
    stderr: 'pipe',
  });
}

const modern = { versionNegotiation: { mode: 'auto' } } as const;

/** Runs every client against its server and returns the protocol versions the SDK clients negotiated. */
export async function runFleet(collectorUrl: string): Promise<Negotiated> {
  // shop-a advertises tasks and search; shop-b (same service) only tasks: drift.
  const shopA = (): StdioClientTransport => server(collectorUrl, 'shop', 'shop-a', { [TASKS]: {}, [SEARCH]: { mode: 'fast' } });
  const shopB = (): StdioClientTransport => server(collectorUrl, 'shop', 'shop-b', { [TASKS]: {} });

  // alpha (2026-07-28) on shop-a: two calls and a request the server answers with -32021 naming REPLAY.
  const alpha = new Client({ name: 'alpha', version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {} } }, ...modern });
  await alpha.connect(shopA());
  const negotiated: Negotiated = { alpha: alpha.getNegotiatedProtocolVersion(), beta: undefined, gamma: undefined };
  await alpha.callTool({ name: 'echo', arguments: { text: 'a' } });
  await alpha.callTool({ name: 'echo', arguments: { text: 'b' } });
  await alpha.request({ method: 'com.example/replayable', params: {} }, z.any()).catch(() => undefined);
  await alpha.close();

  // beta: a 2025-era client (capabilities once, in initialize) declaring search, on shop-a.
  const beta = new Client({ name: 'beta', version: '2.0.0' }, { capabilities: { extensions: { [SEARCH]: {} } } });
  await beta.connect(shopA());
  negotiated.beta = beta.getNegotiatedProtocolVersion();
  await beta.callTool({ name: 'echo', arguments: { text: 'c' } });
  await beta.close();

  // The hostile client name, on shop-a.
  const evil = new Client({ name: EVIL_CLIENT, version: '6.6.6' }, { capabilities: { extensions: { [TASKS]: {} } }, ...modern });
  await evil.connect(shopA());
  await evil.callTool({ name: 'echo', arguments: { text: 'x' } });
  await evil.close();

  // On shop-b: alpha again, once with no extensions in that request's envelope; gamma declares search, which shop-b lacks.
  const alphaB = new Client({ name: 'alpha', version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {} } }, ...modern });
  await alphaB.connect(shopB());
  await alphaB.callTool({ name: 'echo', arguments: { text: 'd' } });
  await alphaB.callTool({ name: 'echo', arguments: { text: 'e' }, _meta: { [CAPS]: {} } });
  await alphaB.close();
  const gamma = new Client({ name: 'gamma', version: '3.0.0' }, { capabilities: { extensions: { [SEARCH]: {} } }, ...modern });
  await gamma.connect(shopB());
  negotiated.gamma = gamma.getNegotiatedProtocolVersion();
  await gamma.callTool({ name: 'echo', arguments: { text: 'f' } });
  await gamma.close();

  // No client info at all: a raw 2026-07-28 request whose envelope has capabilities but no clientInfo, on a
  // service with a hostile name.
  const exchange = await rawStdioExchange(
    fixture('dashboard-stdio.mjs'),
    [
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'echo',
          arguments: { text: 'anon' },
          _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', [CAPS]: { extensions: { [TASKS]: {} } } },
        },
      },
    ],
    true,
    agentEnv(collectorUrl, { OTEL_SERVICE_NAME: EVIL_SERVICE, OTEL_RESOURCE_ATTRIBUTES: 'service.instance.id=anon-1' }),
  );
  if (exchange.code !== 0) throw new Error(`the raw stdio server exited ${exchange.code}: ${exchange.stderr}`);

  // delta: a 2025-era client over stateless HTTP (a fresh server per request): its tools/call lands on an
  // instance that never saw its initialize, so that request has no client name and an unknown declaration.
  const http = spawn(process.execPath, nodeArgs(fixture('v2-http.mjs'), true), { cwd: ROOT, env: agentEnv(collectorUrl) });
  const exited = once(http, 'exit');
  try {
    const [line] = (await once(http.stdout, 'data')) as [Buffer];
    const url = new URL(`http://127.0.0.1:${(JSON.parse(line.toString('utf8')) as { port: number }).port}/mcp`);
    const delta = new Client({ name: 'delta', version: '4.0.0' }, { capabilities: { extensions: { [TASKS]: {} } } });
    await delta.connect(new StreamableHTTPClientTransport(url));
    await delta.callTool({ name: 'echo', arguments: { text: 'd' } });
    await delta.close();
  } finally {
    http.kill('SIGTERM');
    await exited;
  }
  return negotiated;
}

/** Older traffic, 30 hours ago (in the 24 h before the last 24 h): alpha negotiated tasks on 2 of 10 requests; alpha 0.9.0 declared search. */
export async function feedHistory(collectorUrl: string, now = Date.now()): Promise<void> {
  const timeMs = Math.floor((now - 30 * 3_600_000) / 60_000) * 60_000;
  const at = { startNs: msToNs(timeMs) - MINUTE_NS, timeNs: msToNs(timeMs) };
  const client = { client: 'alpha', version: '1.0.0' };
  const response = await postMetrics(
    collectorUrl,
    metricsRequest({
      resource: { service: 'shop', instance: 'shop-history' },
      requests: [requestPoint({ ...client, count: 10, ...at }), requestPoint({ client: 'alpha', version: '0.9.0', count: 5, ...at })],
      extensions: [
        extensionPoint({ ...client, id: TASKS, clientDeclared: true, serverDeclared: true, count: 2, ...at }),
        extensionPoint({ ...client, id: TASKS, clientDeclared: true, serverDeclared: false, count: 8, ...at }),
        // The version before declared search, which 1.0.0 no longer does: a client-version regression.
        extensionPoint({ client: 'alpha', version: '0.9.0', id: SEARCH, clientDeclared: true, serverDeclared: true, count: 5, ...at }),
      ],
    }),
  );
  if (response.status !== 200) throw new Error(`history export: HTTP ${response.status} ${await response.text()}`);
}

/**
 * The fleet's instances as they run while the page is read: a stdio server lives for its client's session, and the
 * ones above have ended, so the live fleet would be empty. One process each of shop-a, shop-b and anon-1 stays up
 * with no client request (an idle server reports what it advertises at every export: nothing is counted) until the
 * returned function ends it; resolves once all three are live.
 */
export async function keepInstancesRunning(collectorUrl: string): Promise<() => Promise<void>> {
  const running = [
    { service: 'shop', instance: 'shop-a', extensions: { [TASKS]: {}, [SEARCH]: { mode: 'fast' } } },
    { service: 'shop', instance: 'shop-b', extensions: { [TASKS]: {} } },
    { service: EVIL_SERVICE, instance: 'anon-1', extensions: undefined },
  ].map(({ service, instance, extensions }) => {
    const child = spawn(process.execPath, nodeArgs(fixture('dashboard-stdio.mjs'), true), {
      cwd: ROOT,
      env: agentEnv(collectorUrl, {
        OTEL_SERVICE_NAME: service,
        // Long-lived instances, as the views under test show them (a row each), not sessions of one build.
        OTEL_RESOURCE_ATTRIBUTES: `service.instance.id=${instance},extscope.server.transport=http`,
        ...(extensions === undefined ? {} : { FIXTURE_EXTENSIONS: JSON.stringify(extensions) }),
      }),
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    // The server is made at the first message: a notification (not a request, so nothing is counted) makes it.
    child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    return { instance, child, exited: once(child, 'exit') };
  });
  const stop = async (): Promise<void> => {
    for (const { child } of running) child.stdin?.end();
    const timer = setTimeout(() => running.forEach(({ child }) => child.kill('SIGKILL')), 10_000);
    await Promise.all(running.map(({ exited }) => exited));
    clearTimeout(timer);
  };
  for (const deadline = Date.now() + 20_000; ;) {
    const body = (await (await fetch(`${collectorUrl}/api/v1/instances`)).json()) as { instances: { instanceId: string | null; live: boolean }[] };
    const live = new Set(body.instances.filter((instance) => instance.live).map((instance) => instance.instanceId));
    if (running.every(({ instance }) => live.has(instance))) return stop;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the kept instances did not become live: ${JSON.stringify([...live])}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
