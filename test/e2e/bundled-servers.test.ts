/**
 * The MCP Apps example servers from npm bundle their copy of the MCP SDK into dist/ (no SDK module is ever
 * loaded, so no hook can patch a class): run under `--import @extscope/agent/register`, they are seen on the wire,
 * over stdio and over HTTP, by real v1 and v2 clients of both eras declaring the MCP Apps extension.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as V1StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCollector, startCollector } from '../../collector/index.js';
import { freePort } from '../support/counting-clients.js';
import { ROOT, agentEnv } from '../support/processes.js';
import { bundleFixture } from '../agent/bundle.js';

const UI = 'io.modelcontextprotocol/ui';
const CAPABILITIES = { extensions: { [UI]: { mimeTypes: ['text/html;profile=mcp-app'] } } };
const require = createRequire(import.meta.url);

/** The bin of an MCP Apps server package (`dist/index.js` beside its main `dist/server.js`, the SDK inlined in both). */
const serverBin = (pkg: string): string => join(dirname(require.resolve(pkg)), 'index.js');

const SERVERS = [
  { pkg: '@modelcontextprotocol/server-basic-vanillajs', name: 'Basic MCP App Server (Vanilla JS)' },
  { pkg: '@modelcontextprotocol/server-system-monitor', name: 'System Monitor Server' },
] as const;

type Era = 'v2-auto' | 'v2-2025' | 'v1';
const CLIENTS: Era[] = ['v2-auto', 'v2-2025', 'v1'];

interface MatrixRow {
  client: string;
  requests: number;
  declaration: { unknown: number; none: number; declared: number };
  extensions: { id: string; clientDeclared: number; serverAdvertised: number; negotiated: number }[];
}

interface InstanceRow {
  service: string | null;
  serverName: string | null;
  advertises: { id: string }[];
  servers: { name: string | null; version: string | null; count: number | null; extensions: unknown[] }[];
}

let collector: RunningCollector;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'extscope-bundled-'));
  collector = await startCollector({ dbPath: join(dir, 'extscope.db'), port: 0 });
});
afterAll(async () => {
  await collector?.close();
  await rm(dir, { recursive: true, force: true });
});

async function api<T>(path: string): Promise<T> {
  const response = await fetch(`${collector.url}${path}`);
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

async function matrixRows(serverName: string): Promise<Map<string, MatrixRow>> {
  const query = new URLSearchParams({ group: 'client_version', from: '2020-01-01T00:00:00Z', service: serverName });
  const body = await api<{ rows: MatrixRow[] }>(`/api/v1/matrix?${query}`);
  return new Map(body.rows.map((row) => [row.client, row]));
}

/** A client of one kind, connected over `transport`; it lists the tools and calls the first one. */
async function exercise(era: Era, name: string, transport: () => object): Promise<string | undefined> {
  const info = { name, version: '1.0.0' };
  if (era === 'v1') {
    const client = new V1Client(info, { capabilities: CAPABILITIES });
    await client.connect(transport() as V1StdioClientTransport);
    const { tools } = await client.listTools();
    await client.callTool({ name: tools[0]!.name, arguments: {} });
    await client.close();
    return undefined;
  }
  const client = new Client(info, { capabilities: CAPABILITIES, ...(era === 'v2-auto' && { versionNegotiation: { mode: 'auto' as const } }) });
  await client.connect(transport() as StdioClientTransport);
  const { tools } = await client.listTools();
  await client.callTool({ name: tools[0]!.name, arguments: {} });
  const negotiated = client.getNegotiatedProtocolVersion();
  await client.close();
  return negotiated;
}

const extension = (row: MatrixRow | undefined, id: string) => {
  const found = row?.extensions.find((entry) => entry.id === id);
  return found === undefined ? undefined : { client: found.clientDeclared, server: found.serverAdvertised, negotiated: found.negotiated };
};

/** Every instance, ended ones too: each server here has exited (or marked its last export) by the time it is read. */
const INSTANCES_EVER = '/api/v1/instances?ended=true';

async function expectInstance(serverName: string): Promise<void> {
  await expect
    .poll(async () => (await api<{ instances: InstanceRow[] }>(INSTANCES_EVER)).instances.filter((row) => row.serverName === serverName).length, {
      timeout: 20_000,
      interval: 250,
    })
    .toBeGreaterThan(0);
  const instances = (await api<{ instances: InstanceRow[] }>(INSTANCES_EVER)).instances.filter((row) => row.serverName === serverName);
  for (const instance of instances) {
    expect(instance.service).toBe(serverName);
    // These servers declare no extension in their capabilities (the UI is linked from tool metadata).
    expect(instance.advertises).toEqual([]);
    expect(instance.servers).toEqual([{ name: serverName, version: '1.0.0', count: 0, extensions: [] }]);
  }
}

describe('bundled SDK copies (MCP Apps servers from npm) are seen on the wire', () => {
  for (const { pkg, name: serverName } of SERVERS) {
    it(`${pkg} over stdio: every request of v1 and v2 clients, both eras, is counted`, async () => {
      const bin = serverBin(pkg);
      const env = agentEnv(collector.url);
      const expected: Record<string, number> = {};
      for (const era of CLIENTS) {
        const clientName = `${era}-stdio-${serverName.length}`;
        const args = ['--import', '@extscope/agent/register', bin, '--stdio'];
        const negotiated = await exercise(era, clientName, () =>
          era === 'v1'
            ? new V1StdioClientTransport({ command: process.execPath, args, cwd: ROOT, env, stderr: 'pipe' })
            : new StdioClientTransport({ command: process.execPath, args, cwd: ROOT, env, stderr: 'pipe' }),
        );
        // A hand-wired stdio transport serves the 2025 era only (over stdio, the negotiating client opens with
        // `initialize` straight away).
        if (era !== 'v1') expect(negotiated).toBe('2025-11-25');
        expected[`${clientName}@1.0.0`] = 3;
      }

      await expect
        .poll(
          async () => {
            const rows = await matrixRows(serverName);
            return Object.fromEntries(Object.keys(expected).map((client) => [client, rows.get(client)?.requests ?? 0]));
          },
          { timeout: 20_000, interval: 250 },
        )
        .toEqual(expected);
      const rows = await matrixRows(serverName);
      expect([...rows.values()].reduce((sum, row) => sum + row.requests, 0)).toBe(9);
      for (const client of Object.keys(expected)) {
        const row = rows.get(client);
        // Declared by `initialize`, for every request of the connection.
        expect(row?.declaration).toEqual({ unknown: 0, none: 0, declared: expected[client] });
        expect(extension(row, UI)).toEqual({ client: expected[client], server: 0, negotiated: 0 });
      }
      await expectInstance(serverName);
    });

    it(`${pkg} over stateless HTTP: every request is counted, the 2025 era's later ones anonymous`, async () => {
      const port = await freePort();
      const server = spawn(process.execPath, ['--import', '@extscope/agent/register', serverBin(pkg)], {
        cwd: ROOT,
        env: agentEnv(collector.url, { PORT: String(port) }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const exited = once(server, 'exit');
      let stderr = '';
      server.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      let rows: Map<string, MatrixRow>;
      try {
        await once(server.stdout, 'data');
        const url = new URL(`http://127.0.0.1:${port}/mcp`);
        for (const era of CLIENTS) {
          const clientName = `${era}-http-${serverName.length}`;
          await exercise(era, clientName, () => (era === 'v1' ? new V1StreamableHTTPClientTransport(url) : new StreamableHTTPClientTransport(url)));
        }
        // While the server runs (its exit, on SIGTERM, is its own `process.exit`): the periodic export carries it.
        await expect
          .poll(async () => [...(await matrixRows(serverName)).values()].reduce((sum, row) => sum + row.requests, 0), { timeout: 20_000, interval: 250 })
          .toBeGreaterThanOrEqual(9 + 10);
        rows = await matrixRows(serverName);
      } finally {
        server.kill('SIGTERM');
        await exited;
      }

      // Named: the 2026-07-28 probe (refused with HTTP 400) and each `initialize`. Each later request lands on a
      // fresh server instance that never saw the client's `initialize`: no name, declaration unknown.
      const expected = {
        [`v2-auto-http-${serverName.length}@1.0.0`]: 2,
        [`v2-2025-http-${serverName.length}@1.0.0`]: 1,
        [`v1-http-${serverName.length}@1.0.0`]: 1,
      };
      for (const [client, count] of Object.entries(expected)) {
        expect(rows.get(client)?.requests, `${client}; stderr: ${stderr}`).toBe(count);
        expect(rows.get(client)?.declaration).toEqual({ unknown: 0, none: 0, declared: count });
      }
      const anonymous = [...rows.values()].filter((row) => row.declaration.unknown > 0);
      expect(anonymous.map((row) => row.declaration)).toEqual([{ unknown: 6, none: 0, declared: 0 }]);
      // 9 over stdio before, 4 + 3 + 3 now.
      expect([...rows.values()].reduce((sum, row) => sum + row.requests, 0)).toBe(19);
      await expectInstance(serverName);
    });
  }
});

describe('an esbuild-bundled v2 server, seen on the wire by real clients of both eras', () => {
  it('serveStdio (2026-07-28 and 2025): exact counts, the server map read from its own answers', async () => {
    const script = await bundleFixture('bundled-v2-stdio.mjs', dir);
    const env = agentEnv(collector.url);
    const negotiated: Record<string, string | undefined> = {};
    for (const era of CLIENTS) {
      const args = ['--import', '@extscope/agent/register', script];
      negotiated[era] = await exercise(era, `bundled-${era}`, () =>
        era === 'v1'
          ? new V1StdioClientTransport({ command: process.execPath, args, cwd: ROOT, env, stderr: 'pipe' })
          : new StdioClientTransport({ command: process.execPath, args, cwd: ROOT, env, stderr: 'pipe' }),
      );
    }
    expect(negotiated['v2-auto']).toBe('2026-07-28');
    expect(negotiated['v2-2025']).toBe('2025-11-25');

    // Each: tools/list and tools/call, after server/discover (2026-07-28) or initialize (2025).
    const expected = { 'bundled-v2-auto@1.0.0': 3, 'bundled-v2-2025@1.0.0': 3, 'bundled-v1@1.0.0': 3 };
    await expect
      .poll(
        async () => {
          const rows = await matrixRows('fixture-bundled-v2');
          return Object.fromEntries(Object.keys(expected).map((client) => [client, rows.get(client)?.requests ?? 0]));
        },
        { timeout: 20_000, interval: 250 },
      )
      .toEqual(expected);
    const rows = await matrixRows('fixture-bundled-v2');
    for (const [client, count] of Object.entries(expected)) {
      expect(rows.get(client)?.declaration).toEqual({ unknown: 0, none: 0, declared: count });
      expect(extension(rows.get(client), UI)).toEqual({ client: count, server: 0, negotiated: 0 });
    }
    // The server's map is what its own answer said: `initialize` covers the 2025 connection; the negotiating
    // client probes with server/discover in a process of its own and reuses that answer in the next, whose wire
    // names the server but not its map: the agent there uses the answer the probe's process wrote down.
    expect(extension(rows.get('bundled-v2-2025@1.0.0'), 'io.modelcontextprotocol/tasks')).toEqual({ client: 0, server: 3, negotiated: 0 });
    expect(extension(rows.get('bundled-v1@1.0.0'), 'io.modelcontextprotocol/tasks')).toEqual({ client: 0, server: 3, negotiated: 0 });
    expect(extension(rows.get('bundled-v2-auto@1.0.0'), 'io.modelcontextprotocol/tasks')).toEqual({ client: 0, server: 3, negotiated: 0 });
    const advertising = (await api<{ instances: InstanceRow[] }>(INSTANCES_EVER)).instances.filter(
      (row) => row.serverName === 'fixture-bundled-v2' && row.advertises.length > 0,
    );
    expect(advertising.length).toBe(4);
    for (const instance of advertising)
      expect(instance.advertises.map((entry) => entry.id).sort()).toEqual(['com.example/search', 'io.modelcontextprotocol/tasks']);
  });
});
