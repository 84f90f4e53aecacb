import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCollector, startCollector } from '../../collector/index.js';
import { type MatrixRow, matrixByClient, pollRequests } from '../support/matrix.js';
import { ROOT, agentEnv, fixture, nodeArgs } from '../support/processes.js';
import { type ListeningChild, startListening, startProxyProcess } from '../support/servers.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const SEARCH = 'com.example/search';
const CLIENT_ONLY = 'com.example/client-only';
const SERVER = fixture('v2-any-transport.mjs');
const EXTSCOPE = join(ROOT, 'dist/bin/extscope.js');

let collector: RunningCollector;
let dir: string;
const children: ListeningChild[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'extscope-three-ways-'));
  collector = await startCollector({ dbPath: join(dir, 'extscope.db'), port: 0 });
});
afterAll(async () => {
  await Promise.all(children.map((child) => child.stop()));
  await collector?.close();
  await rm(dir, { recursive: true, force: true });
});

/**
 * The SDK's stdio transport probes server/discover on a sibling process and starts the server again for the
 * session; a subclass probes in place, so that one process answers both, as one HTTP server does.
 */
class InPlaceStdioClientTransport extends StdioClientTransport {}

interface Connections {
  modern: () => StdioClientTransport | StreamableHTTPClientTransport;
  legacy: () => StdioClientTransport | StreamableHTTPClientTransport;
  v1: () => V1StdioClientTransport | V1StreamableHTTPClientTransport;
}

/** The same three clients and requests, whichever way the server is measured; returns what each negotiated. */
async function clients(connections: Connections): Promise<{ modern?: string; legacy?: string }> {
  const modern = new Client(
    { name: 'three-modern', version: '1.0.0' },
    { capabilities: { extensions: { [TASKS]: {}, [CLIENT_ONLY]: {} } }, versionNegotiation: { mode: 'auto' } },
  );
  await modern.connect(connections.modern());
  await modern.callTool({ name: 'echo', arguments: { text: 'a' } });
  await modern.callTool({ name: 'fails', arguments: {} });
  await modern.listTools();
  const modernVersion = modern.getNegotiatedProtocolVersion();
  await modern.close();
  const legacy = new Client({ name: 'three-legacy', version: '1.0.0' }, { capabilities: { extensions: { [SEARCH]: {} } } });
  await legacy.connect(connections.legacy());
  await legacy.callTool({ name: 'echo', arguments: { text: 'b' } });
  const legacyVersion = legacy.getNegotiatedProtocolVersion();
  await legacy.close();
  const v1 = new V1Client({ name: 'three-v1', version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {}, [SEARCH]: {} } } });
  await v1.connect(connections.v1());
  await v1.listTools();
  await v1.callTool({ name: 'echo', arguments: { text: 'c' } });
  await v1.close();
  return { modern: modernVersion, legacy: legacyVersion };
}

/** What the collector counted for a service, rows and extensions in a stable order, without derived shares. */
async function counted(service: string): Promise<unknown[]> {
  await pollRequests(collector.url, { 'three-modern@1.0.0': 4, 'three-legacy@1.0.0': 2, 'three-v1@1.0.0': 3 }, service);
  const rows = [...(await matrixByClient(collector.url, service)).values()].sort((a, b) => a.client.localeCompare(b.client));
  return rows.map((row: MatrixRow) => ({
    client: row.client,
    requests: row.requests,
    declaration: row.declaration,
    extensions: row.extensions
      .map(({ id, clientDeclared, serverAdvertised, negotiated }) => ({ id, clientDeclared, serverAdvertised, negotiated }))
      .sort((a, b) => a.id.localeCompare(b.id)),
  }));
}

const stdio = (args: string[], service: string) => ({
  command: process.execPath,
  args,
  cwd: ROOT,
  env: agentEnv(collector.url, { OTEL_SERVICE_NAME: service }),
  stderr: 'pipe' as const,
});
const httpConnections = (origin: URL): Connections => ({
  modern: () => new StreamableHTTPClientTransport(new URL('/mcp', origin)),
  legacy: () => new StreamableHTTPClientTransport(new URL('/session', origin)),
  v1: () => new V1StreamableHTTPClientTransport(new URL('/session', origin)),
});

describe('one Node.js server measured in-process, through wrap and through proxy', () => {
  it('gives the same matrix each way: requests, declaration states and negotiated ids per client', async () => {
    // In-process over stdio: `node --import @extscope/agent/register server.mjs stdio`.
    const agentStdio = stdio(nodeArgs(SERVER, true).concat('stdio'), 'three-agent-stdio');
    const versions = [
      await clients({
        modern: () => new InPlaceStdioClientTransport(agentStdio),
        legacy: () => new StdioClientTransport(agentStdio),
        v1: () => new V1StdioClientTransport(agentStdio),
      }),
    ];

    // In-process over HTTP.
    const agentHttp = await startListening(
      process.execPath,
      nodeArgs(SERVER, true).concat('http'),
      agentEnv(collector.url, { OTEL_SERVICE_NAME: 'three-agent-http' }),
    );
    children.push(agentHttp);
    versions.push(await clients(httpConnections(agentHttp.url)));

    // `extscope wrap -- node server.mjs stdio`.
    const wrapped = stdio([EXTSCOPE, 'wrap', '--', process.execPath, SERVER, 'stdio'], 'three-wrap');
    versions.push(
      await clients({
        modern: () => new InPlaceStdioClientTransport(wrapped),
        legacy: () => new StdioClientTransport(wrapped),
        v1: () => new V1StdioClientTransport(wrapped),
      }),
    );

    // `extscope proxy` in front of `node server.mjs http`.
    const upstream = await startListening(process.execPath, [SERVER, 'http'], agentEnv(collector.url));
    children.push(upstream);
    const proxy = await startProxyProcess(upstream.url, agentEnv(collector.url, { OTEL_SERVICE_NAME: 'three-proxy' }));
    children.push(proxy);
    versions.push(await clients(httpConnections(proxy.url)));

    expect(versions).toEqual(Array(4).fill({ modern: '2026-07-28', legacy: '2025-11-25' }));
    const agent = await counted('three-agent-stdio');
    const ext = (id: string, clientDeclared: number, serverAdvertised: number, negotiated: number) => ({ id, clientDeclared, serverAdvertised, negotiated });
    expect(agent).toEqual([
      // initialize and a call, both declared by the session's initialize.
      {
        client: 'three-legacy@1.0.0',
        requests: 2,
        declaration: { unknown: 0, none: 0, declared: 2 },
        extensions: [ext(CLIENT_ONLY, 0, 0, 0), ext(SEARCH, 2, 2, 2), ext(TASKS, 0, 2, 0)],
      },
      // server/discover, two calls and a list, each with its own envelope.
      {
        client: 'three-modern@1.0.0',
        requests: 4,
        declaration: { unknown: 0, none: 0, declared: 4 },
        extensions: [ext(CLIENT_ONLY, 4, 0, 0), ext(SEARCH, 0, 4, 0), ext(TASKS, 4, 4, 4)],
      },
      {
        client: 'three-v1@1.0.0',
        requests: 3,
        declaration: { unknown: 0, none: 0, declared: 3 },
        extensions: [ext(CLIENT_ONLY, 0, 0, 0), ext(SEARCH, 3, 3, 3), ext(TASKS, 3, 3, 3)],
      },
    ]);
    expect(await counted('three-agent-http')).toEqual(agent);
    expect(await counted('three-wrap')).toEqual(agent);
    expect(await counted('three-proxy')).toEqual(agent);
  }, 120_000);
});
