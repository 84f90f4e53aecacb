import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCollector, startCollector } from '../../collector/index.js';
import { extensionCounts, matrixByClient, pollRequests } from '../support/matrix.js';
import { ROOT, agentEnv, fixture } from '../support/processes.js';
import { type ListeningChild, startListening, startProxyProcess } from '../support/servers.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const PYTHON_ONLY = 'com.example/python-mcp';
const FAST_ONLY = 'com.example/fastmcp';
const CLIENT_ONLY = 'com.example/client-only';
const PYTHON_DIR = fixture('python');
// Python servers take seconds to import on a busy machine.
const SLOW = 180_000;

let collector: RunningCollector;
let dir: string;
let python: string;
const children: ListeningChild[] = [];
beforeAll(async () => {
  // Installs the pinned SDKs once into ~/.cache/extscope (minutes when cold); fails the suite when it cannot.
  const venv = execFileSync('bash', [join(ROOT, 'scripts/install-other-sdks.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  python = join(venv, 'bin/python');
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

describe('servers in other languages, measured with wrap and proxy', () => {
  it('Python SDK (mcp 2.3.0) over stdio through wrap: a 2026-07-28 client and a v1 client', async () => {
    const service = 'py-mcp-stdio';
    const modern = new Client({ name: 'py-stdio-modern', version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {}, [CLIENT_ONLY]: {} } }, versionNegotiation: { mode: 'auto' } });
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
    // The probe's process answered server/discover (extensions advertised); the session's process was never asked.
    expect(extensionCounts(modernRow, TASKS)).toEqual({ client: 2, server: 1, negotiated: 1 });
    expect(extensionCounts(modernRow, PYTHON_ONLY)).toEqual({ client: 0, server: 1, negotiated: 0 });
    expect(extensionCounts(modernRow, CLIENT_ONLY)).toEqual({ client: 2, server: 0, negotiated: 0 });
    // mcp 2.3.0 advertises extensions in server/discover only: its 2025-era initialize result has none.
    const legacyRow = rows.get('py-stdio-v1@1.0.0');
    expect(legacyRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 2 });
    expect(extensionCounts(legacyRow, TASKS)).toEqual({ client: 2, server: 0, negotiated: 0 });
  }, SLOW);

  it('Python SDK (mcp 2.3.0) over Streamable HTTP through proxy: 2026-07-28 and 2025-era clients', async () => {
    const service = 'py-mcp-http';
    const url = await proxiedPython('mcp_server', service);
    const modern = new Client({ name: 'py-http-modern', version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: 'auto' } });
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
  }, SLOW);

  it('FastMCP 4.1.6 over Streamable HTTP through proxy and over stdio through wrap', async () => {
    const service = 'fastmcp';
    const url = await proxiedPython('fastmcp_server', service);
    const modern = new Client({ name: 'fast-http-modern', version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {}, [FAST_ONLY]: {} } }, versionNegotiation: { mode: 'auto' } });
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
  }, SLOW);
});
