import { execFileSync } from 'node:child_process';
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
import { extensionCounts, matrixByClient, pollRequests } from '../support/matrix.js';
import { ROOT, agentEnv, feedStdin, fixture } from '../support/processes.js';
import { type ListeningChild, startListening, startProxyProcess } from '../support/servers.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const PYTHON_ONLY = 'com.example/python-mcp';
const FAST_ONLY = 'com.example/fastmcp';
const CLIENT_ONLY = 'com.example/client-only';
const GO_ONLY = 'com.example/go-sdk';
const JAVA_ONLY = 'com.example/java-sdk';
const PYTHON_DIR = fixture('python');
// Python servers take seconds to import on a busy machine.
const SLOW = 180_000;

let collector: RunningCollector;
let dir: string;
let python: string;
let goServer: string;
let javaJar: string;
const children: ListeningChild[] = [];
beforeAll(async () => {
  // Installs the pinned SDKs once into ~/.cache/extscope (a minute or so when cold); fails the suite when it cannot.
  const installed = execFileSync('bash', [join(ROOT, 'scripts/install-other-sdks.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const paths = new Map(
    installed
      .trim()
      .split('\n')
      .map((line) => line.split('=', 2) as [string, string]),
  );
  const path = (name: string): string => {
    const found = paths.get(name);
    if (found === undefined) throw new Error(`install-other-sdks.sh printed no ${name}= line: ${installed}`);
    return found;
  };
  python = join(path('python'), 'bin/python');
  goServer = path('go');
  javaJar = path('java');
  dir = await mkdtemp(join(tmpdir(), 'extscope-languages-'));
  collector = await startCollector({ dbPath: join(dir, 'extscope.db'), port: 0 });
}, 20 * 60_000);
afterAll(async () => {
  await Promise.all(children.map((child) => child.stop()));
  await collector?.close();
  await rm(dir, { recursive: true, force: true });
});

const wrappedPython = (module: string, service: string) => ({
  command: process.execPath,
  args: [join(ROOT, 'dist/bin/extscope.js'), 'wrap', '--', python, join(PYTHON_DIR, 'serve.py'), module],
  cwd: PYTHON_DIR,
  env: agentEnv(collector.url, { OTEL_SERVICE_NAME: service }),
  stderr: 'pipe' as const,
});

async function proxiedPython(module: string, service: string): Promise<URL> {
  const upstream = await startListening(python, [join(PYTHON_DIR, 'serve.py'), module, 'http'], agentEnv(collector.url), '/mcp', SLOW);
  children.push(upstream);
  const proxy = await startProxyProcess(upstream.url, agentEnv(collector.url, { OTEL_SERVICE_NAME: service }));
  children.push(proxy);
  return proxy.url;
}

const wrappedCommand = (command: string, args: string[], service: string) => ({
  command: process.execPath,
  args: [join(ROOT, 'dist/bin/extscope.js'), 'wrap', '--', command, ...args],
  cwd: ROOT,
  env: agentEnv(collector.url, { OTEL_SERVICE_NAME: service }),
  stderr: 'pipe' as const,
});

async function proxied(command: string, args: string[], service: string): Promise<URL> {
  const upstream = await startListening(command, args, agentEnv(collector.url), '/mcp', SLOW);
  children.push(upstream);
  const proxy = await startProxyProcess(upstream.url, agentEnv(collector.url, { OTEL_SERVICE_NAME: service }));
  children.push(proxy);
  return proxy.url;
}

interface Transports {
  v2: () => StdioClientTransport | StreamableHTTPClientTransport;
  /** For the 2026-07-28 client, when it needs a server of its own. */
  modern?: () => StdioClientTransport | StreamableHTTPClientTransport;
  v1: () => V1StdioClientTransport | V1StreamableHTTPClientTransport;
}

interface Seen {
  /** The protocol version each v2 client negotiated. */
  versions: { modern: string | undefined; legacy: string | undefined };
  /** The extension ids each client was told the server supports. */
  advertised: { modern: string[]; legacy: string[]; v1: string[] };
}

const ids = (capabilities: { extensions?: object } | undefined): string[] => Object.keys(capabilities?.extensions ?? {}).sort();

/**
 * The same three clients, each with an extension map of its own: a 2026-07-28 client (server/discover, a call and a
 * list), a 2025-era client (initialize, a call) and a v1 client (initialize, a call and a list).
 */
async function threeClients(prefix: string, transports: Transports, extension: string): Promise<Seen> {
  // Read before close: a closed client forgets what it negotiated.
  const modern = new Client(
    { name: `${prefix}-modern`, version: '1.0.0' },
    { capabilities: { extensions: { [TASKS]: {}, [CLIENT_ONLY]: {} } }, versionNegotiation: { mode: 'auto' } },
  );
  await modern.connect((transports.modern ?? transports.v2)());
  await modern.callTool({ name: 'echo', arguments: { text: 'a' } });
  await modern.listTools();
  const modernSeen = { version: modern.getNegotiatedProtocolVersion(), advertised: ids(modern.getServerCapabilities()) };
  await modern.close();
  const legacy = new Client({ name: `${prefix}-legacy`, version: '1.0.0' }, { capabilities: { extensions: { [extension]: {} } } });
  await legacy.connect(transports.v2());
  await legacy.callTool({ name: 'echo', arguments: { text: 'b' } });
  const legacySeen = { version: legacy.getNegotiatedProtocolVersion(), advertised: ids(legacy.getServerCapabilities()) };
  await legacy.close();
  const v1 = new V1Client({ name: `${prefix}-v1`, version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {} } } });
  await v1.connect(transports.v1());
  await v1.callTool({ name: 'echo', arguments: { text: 'c' } });
  await v1.listTools();
  const v1Advertised = ids(v1.getServerCapabilities());
  await v1.close();
  return {
    versions: { modern: modernSeen.version, legacy: legacySeen.version },
    advertised: { modern: modernSeen.advertised, legacy: legacySeen.advertised, v1: v1Advertised },
  };
}

describe('servers in other languages, measured with wrap and proxy', () => {
  it(
    'Python SDK (mcp 2.3.0) over stdio through wrap: a 2026-07-28 client and a v1 client',
    async () => {
      const service = 'py-mcp-stdio';
      const modern = new Client(
        { name: 'py-stdio-modern', version: '1.0.0' },
        { capabilities: { extensions: { [TASKS]: {}, [CLIENT_ONLY]: {} } }, versionNegotiation: { mode: 'auto' } },
      );
      await modern.connect(new StdioClientTransport(wrappedPython('mcp_server', service)));
      expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      await modern.callTool({ name: 'echo', arguments: { text: 'a' } });
      await modern.close();
      const legacy = new V1Client({ name: 'py-stdio-v1', version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {} } } });
      await legacy.connect(new V1StdioClientTransport(wrappedPython('mcp_server', service)));
      await legacy.callTool({ name: 'echo', arguments: { text: 'b' } });
      await legacy.close();

      await pollRequests(collector.url, { 'py-stdio-modern@1.0.0': 2, 'py-stdio-v1@1.0.0': 2 }, service);
      const rows = await matrixByClient(collector.url, service);
      const modernRow = rows.get('py-stdio-modern@1.0.0');
      expect(modernRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 2 });
      // The probe's process answered server/discover (extensions advertised); the session's process was never asked,
      // and its wrapper used the answer the probe's wrapper wrote down (the same server by name and version).
      expect(extensionCounts(modernRow, TASKS)).toEqual({ client: 2, server: 2, negotiated: 2 });
      expect(extensionCounts(modernRow, PYTHON_ONLY)).toEqual({ client: 0, server: 2, negotiated: 0 });
      expect(extensionCounts(modernRow, CLIENT_ONLY)).toEqual({ client: 2, server: 0, negotiated: 0 });
      // mcp 2.3.0 advertises extensions in server/discover only: its 2025-era initialize result has none.
      const legacyRow = rows.get('py-stdio-v1@1.0.0');
      expect(legacyRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 2 });
      expect(extensionCounts(legacyRow, TASKS)).toEqual({ client: 2, server: 0, negotiated: 0 });
    },
    SLOW,
  );

  it(
    'Python SDK (mcp 2.3.0) over Streamable HTTP through proxy: 2026-07-28 and 2025-era clients',
    async () => {
      const service = 'py-mcp-http';
      const url = await proxiedPython('mcp_server', service);
      const modern = new Client(
        { name: 'py-http-modern', version: '1.0.0' },
        { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: 'auto' } },
      );
      await modern.connect(new StreamableHTTPClientTransport(url));
      expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      await modern.callTool({ name: 'echo', arguments: { text: 'a' } });
      await modern.listTools();
      await modern.close();
      const legacy = new Client({ name: 'py-http-legacy', version: '1.0.0' }, { capabilities: { extensions: { [CLIENT_ONLY]: {} } } });
      await legacy.connect(new StreamableHTTPClientTransport(url));
      await legacy.callTool({ name: 'echo', arguments: { text: 'b' } });
      await legacy.close();

      await pollRequests(collector.url, { 'py-http-modern@1.0.0': 3, 'py-http-legacy@1.0.0': 2 }, service);
      const rows = await matrixByClient(collector.url, service);
      const modernRow = rows.get('py-http-modern@1.0.0');
      expect(modernRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 3 });
      expect(extensionCounts(modernRow, TASKS)).toEqual({ client: 3, server: 3, negotiated: 3 });
      expect(extensionCounts(modernRow, PYTHON_ONLY)).toEqual({ client: 0, server: 3, negotiated: 0 });
      // The session keeps the legacy client's initialize across its exchanges.
      const legacyRow = rows.get('py-http-legacy@1.0.0');
      expect(legacyRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 2 });
      expect(extensionCounts(legacyRow, CLIENT_ONLY)).toEqual({ client: 2, server: 0, negotiated: 0 });
    },
    SLOW,
  );

  it(
    'FastMCP 4.1.6 over Streamable HTTP through proxy and over stdio through wrap',
    async () => {
      const service = 'fastmcp';
      const url = await proxiedPython('fastmcp_server', service);
      const modern = new Client(
        { name: 'fast-http-modern', version: '1.0.0' },
        { capabilities: { extensions: { [TASKS]: {}, [FAST_ONLY]: {} } }, versionNegotiation: { mode: 'auto' } },
      );
      await modern.connect(new StreamableHTTPClientTransport(url));
      expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      await modern.callTool({ name: 'echo', arguments: { text: 'a' } });
      await modern.close();
      const legacy = new Client({ name: 'fast-stdio-legacy', version: '1.0.0' }, { capabilities: { extensions: { [FAST_ONLY]: {} } } });
      await legacy.connect(new StdioClientTransport(wrappedPython('fastmcp_server', 'fastmcp-stdio')));
      await legacy.callTool({ name: 'echo', arguments: { text: 'b' } });
      await legacy.close();

      await pollRequests(collector.url, { 'fast-http-modern@1.0.0': 2 }, service);
      const modernRow = (await matrixByClient(collector.url, service)).get('fast-http-modern@1.0.0');
      expect(modernRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 2 });
      expect(extensionCounts(modernRow, TASKS)).toEqual({ client: 2, server: 2, negotiated: 2 });
      expect(extensionCounts(modernRow, FAST_ONLY)).toEqual({ client: 2, server: 2, negotiated: 2 });
      // FastMCP advertises the apps extension of its own.
      expect(extensionCounts(modernRow, 'io.modelcontextprotocol/ui')).toEqual({ client: 0, server: 2, negotiated: 0 });

      await pollRequests(collector.url, { 'fast-stdio-legacy@1.0.0': 2 }, 'fastmcp-stdio');
      const legacyRow = (await matrixByClient(collector.url, 'fastmcp-stdio')).get('fast-stdio-legacy@1.0.0');
      expect(legacyRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 2 });
      expect(extensionCounts(legacyRow, FAST_ONLY)?.client).toBe(2);
    },
    SLOW,
  );

  it(
    'Go SDK (v1.8.0) over stdio through wrap: 2026-07-28, 2025-era and v1 clients',
    async () => {
      const service = 'go-sdk-stdio';
      const wrappedGo = () => wrappedCommand(goServer, ['stdio'], service);
      const seen = await threeClients(
        'go-stdio',
        { v2: () => new StdioClientTransport(wrappedGo()), v1: () => new V1StdioClientTransport(wrappedGo()) },
        GO_ONLY,
      );
      expect(seen.versions).toEqual({ modern: '2026-07-28', legacy: '2025-11-25' });
      // The Go SDK advertises its extensions in server/discover and in initialize alike.
      expect(seen.advertised).toEqual({ modern: [GO_ONLY, TASKS], legacy: [GO_ONLY, TASKS], v1: [GO_ONLY, TASKS] });

      await pollRequests(collector.url, { 'go-stdio-modern@1.0.0': 3, 'go-stdio-legacy@1.0.0': 2, 'go-stdio-v1@1.0.0': 3 }, service);
      const rows = await matrixByClient(collector.url, service);
      const modernRow = rows.get('go-stdio-modern@1.0.0');
      expect(modernRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 3 });
      // The probe's process answered server/discover; the session's process (a call and a list) was never asked:
      // its wrapper used the answer the probe's wrapper wrote down.
      expect(extensionCounts(modernRow, TASKS)).toEqual({ client: 3, server: 3, negotiated: 3 });
      expect(extensionCounts(modernRow, CLIENT_ONLY)).toEqual({ client: 3, server: 0, negotiated: 0 });
      expect(extensionCounts(modernRow, GO_ONLY)).toEqual({ client: 0, server: 3, negotiated: 0 });
      const legacyRow = rows.get('go-stdio-legacy@1.0.0');
      expect(legacyRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 2 });
      expect(extensionCounts(legacyRow, GO_ONLY)).toEqual({ client: 2, server: 2, negotiated: 2 });
      expect(extensionCounts(legacyRow, TASKS)).toEqual({ client: 0, server: 2, negotiated: 0 });
      const v1Row = rows.get('go-stdio-v1@1.0.0');
      expect(v1Row?.declaration).toEqual({ unknown: 0, none: 0, declared: 3 });
      expect(extensionCounts(v1Row, TASKS)).toEqual({ client: 3, server: 3, negotiated: 3 });
      expect(extensionCounts(v1Row, GO_ONLY)).toEqual({ client: 0, server: 3, negotiated: 0 });
      expect([...rows.keys()].sort()).toEqual(['go-stdio-legacy@1.0.0', 'go-stdio-modern@1.0.0', 'go-stdio-v1@1.0.0']);
    },
    SLOW,
  );

  it(
    'Go SDK (v1.8.0) over stateless Streamable HTTP through proxy: 2025-era requests after initialize have no session, so no client',
    async () => {
      const service = 'go-sdk-http';
      const url = await proxied(goServer, ['http'], service);
      const seen = await threeClients(
        'go-http',
        { v2: () => new StreamableHTTPClientTransport(url), v1: () => new V1StreamableHTTPClientTransport(url) },
        GO_ONLY,
      );
      expect(seen.versions).toEqual({ modern: '2026-07-28', legacy: '2025-11-25' });
      expect(seen.advertised).toEqual({ modern: [GO_ONLY, TASKS], legacy: [GO_ONLY, TASKS], v1: [GO_ONLY, TASKS] });

      const unattributed = '(unknown client)@(unknown version)';
      await pollRequests(collector.url, { 'go-http-modern@1.0.0': 3, 'go-http-legacy@1.0.0': 1, 'go-http-v1@1.0.0': 1, [unattributed]: 3 }, service);
      const rows = await matrixByClient(collector.url, service);
      expect(rows.size).toBe(4);
      const modernRow = rows.get('go-http-modern@1.0.0');
      expect(modernRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 3 });
      // Every 2026-07-28 request carries the client's map, and every answer after server/discover has the server's.
      expect(extensionCounts(modernRow, TASKS)).toEqual({ client: 3, server: 3, negotiated: 3 });
      expect(extensionCounts(modernRow, CLIENT_ONLY)).toEqual({ client: 3, server: 0, negotiated: 0 });
      expect(extensionCounts(modernRow, GO_ONLY)).toEqual({ client: 0, server: 3, negotiated: 0 });
      // The stateless handler sets no Mcp-Session-Id: only each initialize names its client.
      const legacyRow = rows.get('go-http-legacy@1.0.0');
      expect(legacyRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 1 });
      expect(extensionCounts(legacyRow, GO_ONLY)).toEqual({ client: 1, server: 1, negotiated: 1 });
      const v1Row = rows.get('go-http-v1@1.0.0');
      expect(v1Row?.declaration).toEqual({ unknown: 0, none: 0, declared: 1 });
      expect(extensionCounts(v1Row, TASKS)).toEqual({ client: 1, server: 1, negotiated: 1 });
      // The three calls and lists after them: client unknown, the server's map learned from its earlier answers.
      const unknownRow = rows.get(unattributed);
      expect(unknownRow?.declaration).toEqual({ unknown: 3, none: 0, declared: 0 });
      expect(extensionCounts(unknownRow, GO_ONLY)).toEqual({ client: 0, server: 3, negotiated: 0 });
      expect(extensionCounts(unknownRow, TASKS)).toEqual({ client: 0, server: 3, negotiated: 0 });
    },
    SLOW,
  );

  it(
    'Go SDK (v1.8.0) over stateful Streamable HTTP through proxy: sessions keep each client; 2026-07-28 is not served there',
    async () => {
      const service = 'go-sdk-http-stateful';
      const url = await proxied(goServer, ['http-stateful'], service);
      const seen = await threeClients(
        'go-session',
        { v2: () => new StreamableHTTPClientTransport(url), v1: () => new V1StreamableHTTPClientTransport(url) },
        GO_ONLY,
      );
      // server/discover answers without 2026-07-28 here, so the 2026-07-28 client falls back to initialize.
      expect(seen.versions).toEqual({ modern: '2025-11-25', legacy: '2025-11-25' });
      expect(seen.advertised).toEqual({ modern: [GO_ONLY, TASKS], legacy: [GO_ONLY, TASKS], v1: [GO_ONLY, TASKS] });

      await pollRequests(collector.url, { 'go-session-modern@1.0.0': 4, 'go-session-legacy@1.0.0': 2, 'go-session-v1@1.0.0': 3 }, service);
      const rows = await matrixByClient(collector.url, service);
      expect([...rows.keys()].sort()).toEqual(['go-session-legacy@1.0.0', 'go-session-modern@1.0.0', 'go-session-v1@1.0.0']);
      // server/discover, initialize, a call and a list: the probe and the session declare the same map.
      const modernRow = rows.get('go-session-modern@1.0.0');
      expect(modernRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 4 });
      expect(extensionCounts(modernRow, TASKS)).toEqual({ client: 4, server: 4, negotiated: 4 });
      expect(extensionCounts(modernRow, CLIENT_ONLY)).toEqual({ client: 4, server: 0, negotiated: 0 });
      expect(extensionCounts(modernRow, GO_ONLY)).toEqual({ client: 0, server: 4, negotiated: 0 });
      const legacyRow = rows.get('go-session-legacy@1.0.0');
      expect(legacyRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 2 });
      expect(extensionCounts(legacyRow, GO_ONLY)).toEqual({ client: 2, server: 2, negotiated: 2 });
      expect(extensionCounts(legacyRow, TASKS)).toEqual({ client: 0, server: 2, negotiated: 0 });
      const v1Row = rows.get('go-session-v1@1.0.0');
      expect(v1Row?.declaration).toEqual({ unknown: 0, none: 0, declared: 3 });
      expect(extensionCounts(v1Row, TASKS)).toEqual({ client: 3, server: 3, negotiated: 3 });
      expect(extensionCounts(v1Row, GO_ONLY)).toEqual({ client: 0, server: 3, negotiated: 0 });
    },
    SLOW,
  );

  it(
    'Java SDK (2.2.0) over stdio through wrap: its 2026-07-28 server with a 2026-07-28 client, its 2025-era server with 2025-era and v1 clients',
    async () => {
      const service = 'java-sdk-stdio';
      // The SDK's two servers are apart: the 2026-07-28 one refuses initialize, the 2025-era one knows no server/discover.
      const wrappedJava = (mode: 'modern' | 'legacy') => wrappedCommand('java', ['-jar', javaJar, mode], service);
      const seen = await threeClients(
        'java-stdio',
        {
          modern: () => new StdioClientTransport(wrappedJava('modern')),
          v2: () => new StdioClientTransport(wrappedJava('legacy')),
          v1: () => new V1StdioClientTransport(wrappedJava('legacy')),
        },
        JAVA_ONLY,
      );
      expect(seen.versions).toEqual({ modern: '2026-07-28', legacy: '2025-11-25' });
      expect(seen.advertised).toEqual({ modern: [JAVA_ONLY, TASKS], legacy: [JAVA_ONLY, TASKS], v1: [JAVA_ONLY, TASKS] });

      await pollRequests(collector.url, { 'java-stdio-modern@1.0.0': 3, 'java-stdio-legacy@1.0.0': 2, 'java-stdio-v1@1.0.0': 3 }, service);
      const rows = await matrixByClient(collector.url, service);
      expect([...rows.keys()].sort()).toEqual(['java-stdio-legacy@1.0.0', 'java-stdio-modern@1.0.0', 'java-stdio-v1@1.0.0']);
      const modernRow = rows.get('java-stdio-modern@1.0.0');
      expect(modernRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 3 });
      // As for every stdio server: the probe's process answered server/discover, the session's process was never
      // asked, and its wrapper used the answer the probe's wrapper wrote down.
      expect(extensionCounts(modernRow, TASKS)).toEqual({ client: 3, server: 3, negotiated: 3 });
      expect(extensionCounts(modernRow, CLIENT_ONLY)).toEqual({ client: 3, server: 0, negotiated: 0 });
      expect(extensionCounts(modernRow, JAVA_ONLY)).toEqual({ client: 0, server: 3, negotiated: 0 });
      const legacyRow = rows.get('java-stdio-legacy@1.0.0');
      expect(legacyRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 2 });
      expect(extensionCounts(legacyRow, JAVA_ONLY)).toEqual({ client: 2, server: 2, negotiated: 2 });
      expect(extensionCounts(legacyRow, TASKS)).toEqual({ client: 0, server: 2, negotiated: 0 });
      const v1Row = rows.get('java-stdio-v1@1.0.0');
      expect(v1Row?.declaration).toEqual({ unknown: 0, none: 0, declared: 3 });
      expect(extensionCounts(v1Row, TASKS)).toEqual({ client: 3, server: 3, negotiated: 3 });
      expect(extensionCounts(v1Row, JAVA_ONLY)).toEqual({ client: 0, server: 3, negotiated: 0 });
    },
    SLOW,
  );

  it(
    'Java SDK (2.2.0) over Streamable HTTP through proxy: its 2026-07-28 servlet for a 2026-07-28 client, its 2025-era servlet (with sessions) for 2025-era and v1 clients',
    async () => {
      const service = 'java-sdk-http';
      const url = await proxied('java', ['-jar', javaJar, 'http'], service);
      const session = new URL('/session', url);
      const seen = await threeClients(
        'java-http',
        {
          modern: () => new StreamableHTTPClientTransport(url),
          v2: () => new StreamableHTTPClientTransport(session),
          v1: () => new V1StreamableHTTPClientTransport(session),
        },
        JAVA_ONLY,
      );
      expect(seen.versions).toEqual({ modern: '2026-07-28', legacy: '2025-11-25' });
      expect(seen.advertised).toEqual({ modern: [JAVA_ONLY, TASKS], legacy: [JAVA_ONLY, TASKS], v1: [JAVA_ONLY, TASKS] });

      await pollRequests(collector.url, { 'java-http-modern@1.0.0': 3, 'java-http-legacy@1.0.0': 2, 'java-http-v1@1.0.0': 3 }, service);
      const rows = await matrixByClient(collector.url, service);
      expect([...rows.keys()].sort()).toEqual(['java-http-legacy@1.0.0', 'java-http-modern@1.0.0', 'java-http-v1@1.0.0']);
      const modernRow = rows.get('java-http-modern@1.0.0');
      expect(modernRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 3 });
      expect(extensionCounts(modernRow, TASKS)).toEqual({ client: 3, server: 3, negotiated: 3 });
      expect(extensionCounts(modernRow, CLIENT_ONLY)).toEqual({ client: 3, server: 0, negotiated: 0 });
      expect(extensionCounts(modernRow, JAVA_ONLY)).toEqual({ client: 0, server: 3, negotiated: 0 });
      // The session keeps each 2025-era client's initialize across its exchanges.
      const legacyRow = rows.get('java-http-legacy@1.0.0');
      expect(legacyRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 2 });
      expect(extensionCounts(legacyRow, JAVA_ONLY)).toEqual({ client: 2, server: 2, negotiated: 2 });
      expect(extensionCounts(legacyRow, TASKS)).toEqual({ client: 0, server: 2, negotiated: 0 });
      const v1Row = rows.get('java-http-v1@1.0.0');
      expect(v1Row?.declaration).toEqual({ unknown: 0, none: 0, declared: 3 });
      expect(extensionCounts(v1Row, TASKS)).toEqual({ client: 3, server: 3, negotiated: 3 });
      expect(extensionCounts(v1Row, JAVA_ONLY)).toEqual({ client: 0, server: 3, negotiated: 0 });
    },
    SLOW,
  );

  it(
    'Python SDK (mcp 2.3.0) through wrap: counts exactly past malformed lines and a 100 MB line, and a client leaving mid-message adds nothing',
    async () => {
      const service = 'py-resync';
      const line = (message: object) => Buffer.from(`${JSON.stringify(message)}\n`);
      // 100 MiB that start like a JSON-RPC message: wrap passes it on unread (past 16 MiB); the server skips it.
      const huge = Buffer.alloc(100 * 1024 * 1024 + 1, 'a');
      huge[0] = 0x7b;
      huge[huge.length - 1] = 0x0a;
      const chunks = [
        line({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: { extensions: { [TASKS]: {} } }, clientInfo: { name: 'py-resync-client', version: '1.0.0' } },
        }),
        line({ jsonrpc: '2.0', method: 'notifications/initialized' }),
        Buffer.from('not json at all\n{"jsonrpc":"2.0","id":\n'),
        huge,
        line({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'after' } } }),
        // The client leaves in the middle of its next message: stdin ends there.
        Buffer.from('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ec'),
      ];
      const args = [join(PYTHON_DIR, 'serve.py'), 'mcp_server'];
      // Both answers are in before the client leaves: the SDK drops requests in flight when its input ends.
      const plain = await feedStdin(python, args, chunks, agentEnv(collector.url), PYTHON_DIR, { answersBeforeLast: 2 });
      const through = await feedStdin(
        process.execPath,
        [join(ROOT, 'dist/bin/extscope.js'), 'wrap', '--', python, ...args],
        chunks,
        agentEnv(collector.url, { OTEL_SERVICE_NAME: service }),
        PYTHON_DIR,
        { answersBeforeLast: 2 },
      );
      expect(through.code).toBe(plain.code);
      expect(through.stdout.equals(plain.stdout)).toBe(true);
      const answers = through.stdout
        .toString('utf8')
        .trim()
        .split('\n')
        .map((text) => JSON.parse(text) as { id: number });
      expect(answers.map((answer) => answer.id)).toEqual([0, 1]);
      expect(JSON.stringify(answers[1])).toContain('after');
      // wrap exports its last counts before it exits: these are final.
      await pollRequests(collector.url, { 'py-resync-client@1.0.0': 2 }, service);
      const rows = await matrixByClient(collector.url, service);
      expect([...rows.keys()]).toEqual(['py-resync-client@1.0.0']);
      expect(rows.get('py-resync-client@1.0.0')?.declaration).toEqual({ unknown: 0, none: 0, declared: 2 });
      expect(extensionCounts(rows.get('py-resync-client@1.0.0'), TASKS)).toEqual({ client: 2, server: 0, negotiated: 0 });
    },
    SLOW,
  );
});
