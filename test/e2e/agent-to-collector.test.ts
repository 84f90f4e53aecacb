import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCollector, startCollector } from '../../collector/index.js';
import { ROOT, agentEnv, fixture, nodeArgs } from '../support/processes.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const SEARCH = 'com.example/search';
const REPLAY = 'com.example/replay';
const CAPS = 'io.modelcontextprotocol/clientCapabilities';

interface MatrixRow {
  client: string;
  requests: number;
  declaration: { unknown: number; none: number; declared: number };
  extensions: { id: string; clientDeclared: number; serverAdvertised: number; negotiated: number }[];
}

let collector: RunningCollector;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'extscope-e2e-'));
  collector = await startCollector({ dbPath: join(dir, 'extscope.db'), port: 0 });
});
afterAll(async () => {
  await collector?.close();
  await rm(dir, { recursive: true, force: true });
});

function stdio(script: string): StdioClientTransport {
  return new StdioClientTransport({
    command: process.execPath,
    args: nodeArgs(fixture(script), true),
    cwd: ROOT,
    env: agentEnv(collector.url),
    stderr: 'pipe',
  });
}

async function matrix(): Promise<Map<string, MatrixRow>> {
  const response = await fetch(`${collector.url}/api/v1/matrix?group=client_version&from=2020-01-01T00:00:00Z`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { rows: MatrixRow[] };
  return new Map(body.rows.map((row) => [row.client, row]));
}

const extension = (row: MatrixRow | undefined, id: string) => {
  const found = row?.extensions.find((entry) => entry.id === id);
  return found === undefined ? undefined : { client: found.clientDeclared, server: found.serverAdvertised, negotiated: found.negotiated };
};

describe('end to end: MCP servers run with the agent → OTLP → collector → matrix', () => {
  it('reports exactly the requests sent, per client and per extension, with the right declaration states', async () => {
    // alpha: 2026-07-28 over stdio; two concurrent calls on one instance with different maps, then one more.
    const alpha = new Client({ name: 'alpha', version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: 'auto' } });
    await alpha.connect(stdio('barrier-stdio.mjs'));
    const both = await Promise.all([
      alpha.callTool({ name: 'wait', arguments: {}, _meta: { [CAPS]: { extensions: { [TASKS]: {} } } } }),
      alpha.callTool({ name: 'wait', arguments: {}, _meta: { [CAPS]: {} } }),
    ]);
    expect(both.map((result) => (result.content as { text: string }[])[0]?.text)).toEqual(['released', 'released']);
    await alpha.callTool({ name: 'echo', arguments: { text: 'x' }, _meta: { [CAPS]: { extensions: { [TASKS]: {}, [REPLAY]: { maxAttempts: 3 } } } } });
    await alpha.close();

    // beta: 2025 era over stdio (initialize declares search), two calls inherit it.
    const beta = new Client({ name: 'beta', version: '2.0.0' }, { capabilities: { extensions: { [SEARCH]: {} } } });
    await beta.connect(stdio('v2-stdio.cjs'));
    await beta.callTool({ name: 'echo', arguments: { text: 'a' } });
    await beta.callTool({ name: 'fails', arguments: {} });
    await beta.close();

    // gamma (2026-07-28) and delta (2025, stateless: its later call is unknown) over HTTP, fresh server per request.
    const http = spawn(process.execPath, nodeArgs(fixture('v2-http.mjs'), true), { cwd: ROOT, env: agentEnv(collector.url) });
    const exited = once(http, 'exit');
    try {
      const [line] = (await once(http.stdout, 'data')) as [Buffer];
      const url = new URL(`http://127.0.0.1:${(JSON.parse(line.toString('utf8')) as { port: number }).port}/mcp`);
      const gamma = new Client(
        { name: 'gamma', version: '3.0.0' },
        { capabilities: { extensions: { [SEARCH]: { mode: 'fast' } } }, versionNegotiation: { mode: 'auto' } },
      );
      await gamma.connect(new StreamableHTTPClientTransport(url));
      await gamma.callTool({ name: 'echo', arguments: { text: 'g' } });
      await gamma.close();
      const delta = new Client({ name: 'delta', version: '4.0.0' }, { capabilities: { extensions: { [TASKS]: {} } } });
      await delta.connect(new StreamableHTTPClientTransport(url));
      await delta.callTool({ name: 'echo', arguments: { text: 'd' } });
      await delta.close();
    } finally {
      http.kill('SIGTERM');
      await exited;
    }

    const expected = { 'alpha@1.0.0': 4, 'beta@2.0.0': 3, 'gamma@3.0.0': 2, 'delta@4.0.0': 1 };
    await expect
      .poll(
        async () => {
          const rows = await matrix();
          return Object.fromEntries(Object.keys(expected).map((client) => [client, rows.get(client)?.requests ?? 0]));
        },
        { timeout: 20_000, interval: 250 },
      )
      .toEqual(expected);

    const rows = await matrix();
    const alphaRow = rows.get('alpha@1.0.0');
    expect(alphaRow?.declaration).toEqual({ unknown: 0, none: 1, declared: 3 });
    expect(extension(alphaRow, TASKS)).toEqual({ client: 3, server: 4, negotiated: 3 });
    expect(extension(alphaRow, REPLAY)).toEqual({ client: 1, server: 0, negotiated: 0 });
    expect(extension(alphaRow, SEARCH)).toEqual({ client: 0, server: 4, negotiated: 0 });

    const betaRow = rows.get('beta@2.0.0');
    expect(betaRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 3 });
    expect(extension(betaRow, SEARCH)).toEqual({ client: 3, server: 3, negotiated: 3 });
    expect(extension(betaRow, TASKS)).toEqual({ client: 0, server: 3, negotiated: 0 });

    const gammaRow = rows.get('gamma@3.0.0');
    expect(gammaRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 2 });
    expect(extension(gammaRow, SEARCH)).toEqual({ client: 2, server: 2, negotiated: 2 });

    expect(rows.get('delta@4.0.0')?.declaration).toEqual({ unknown: 0, none: 0, declared: 1 });
    // delta's tools/call landed on a fresh instance that never saw its initialize: no name, unknown declaration.
    const anonymous = [...rows.values()].filter((row) => row.declaration.unknown > 0);
    expect(anonymous.map((row) => row.requests)).toEqual([1]);
    expect(anonymous[0]?.declaration).toEqual({ unknown: 1, none: 0, declared: 0 });
    expect(extension(anonymous[0], TASKS)).toEqual({ client: 0, server: 1, negotiated: 0 });

    // Everything received is counted once, and nothing else is in the matrix.
    const total = [...rows.values()].reduce((sum, row) => sum + row.requests, 0);
    expect(total).toBe(4 + 3 + 2 + 1 + 1);
  });
});
