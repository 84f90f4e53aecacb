import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCollector, startCollector } from '../../../collector/index.js';
import { ROOT, agentEnv, fixture, nodeArgs } from '../../support/processes.js';

const TASKS = 'io.modelcontextprotocol/tasks';

let collector: RunningCollector;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'extscope-transport-entry-'));
  collector = await startCollector({ dbPath: join(dir, 'extscope.db'), port: 0 });
});
afterAll(async () => {
  await collector?.close();
  await rm(dir, { recursive: true, force: true });
});

interface MatrixRow {
  client: string;
  requests: number;
}

describe('answers a streamable HTTP transport gives itself are requests too', () => {
  it('v1 sessions: the transport\'s 400 "Server not initialized" to a server/discover probe is counted (3 sent, 3 in the matrix)', async () => {
    const child = spawn(process.execPath, nodeArgs(fixture('v1-http-sessions.mjs'), true), { cwd: ROOT, env: agentEnv(collector.url) });
    const exited = once(child, 'exit');
    const statuses: number[] = [];
    try {
      const [line] = (await once(child.stdout, 'data')) as [Buffer];
      const url = new URL(`http://127.0.0.1:${(JSON.parse(line.toString('utf8')) as { port: number }).port}/mcp`);
      const client = new Client(
        { name: 'probing-client', version: '1.0.0' },
        { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: 'auto' } },
      );
      const observedFetch: typeof fetch = async (input, init) => {
        const response = await fetch(input, init);
        if (init?.method === 'POST' && typeof init.body === 'string' && init.body.includes('"id"')) statuses.push(response.status);
        return response;
      };
      await client.connect(new StreamableHTTPClientTransport(url, { fetch: observedFetch }));
      expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
      const result = await client.callTool({ name: 'echo', arguments: { text: 'x' } });
      expect((result.content as { text: string }[])[0]?.text).toBe('x');
      await client.close();
      // The client sent three requests: the probe (refused by the transport), initialize, tools/call.
      expect(statuses).toEqual([400, 200, 200]);

      const rows = async () => {
        const response = await fetch(`${collector.url}/api/v1/matrix?group=client&from=2020-01-01T00:00:00Z`);
        return ((await response.json()) as { rows: MatrixRow[] }).rows;
      };
      await expect.poll(async () => (await rows()).find((row) => row.client === 'probing-client')?.requests, { timeout: 20_000, interval: 250 }).toBe(3);
      expect((await rows()).reduce((sum, row) => sum + row.requests, 0)).toBe(3);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  it("v1 sessions: the transport's 415, and its 413 found while reading a streamed body, are each counted under the client the body names", async () => {
    const child = spawn(process.execPath, nodeArgs(fixture('v1-http-sessions.mjs'), true), { cwd: ROOT, env: agentEnv(collector.url) });
    const exited = once(child, 'exit');
    try {
      const [line] = (await once(child.stdout, 'data')) as [Buffer];
      const url = `http://127.0.0.1:${(JSON.parse(line.toString('utf8')) as { port: number }).port}/mcp`;
      const initialize = (client: string, pad = '') =>
        JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: { extensions: { [TASKS]: {} } }, clientInfo: { name: client, version: '1' }, pad },
        });
      const accept = 'application/json, text/event-stream';
      const unsupported = await fetch(url, { method: 'POST', headers: { accept, 'content-type': 'text/plain' }, body: initialize('plain-text-client') });
      expect(unsupported.status).toBe(415);
      // Over the transport's 4 MB bound, sent without Content-Length: the transport finds out while reading.
      const bytes = new TextEncoder().encode(initialize('oversized-client', 'x'.repeat(4_500_000)));
      let at = 0;
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (at >= bytes.length) return controller.close();
          controller.enqueue(bytes.subarray(at, at + 65_536));
          at += 65_536;
        },
      });
      const oversized = await fetch(url, {
        method: 'POST',
        headers: { accept, 'content-type': 'application/json' },
        body: stream,
        duplex: 'half',
      } as RequestInit);
      expect(oversized.status).toBe(413);

      const rows = async () => {
        const response = await fetch(`${collector.url}/api/v1/matrix?group=client&from=2020-01-01T00:00:00Z`);
        return ((await response.json()) as { rows: MatrixRow[] }).rows;
      };
      const counted = async () =>
        (await rows())
          .filter((row) => row.client === 'plain-text-client' || row.client === 'oversized-client')
          .map((row) => `${row.client} ${row.requests}`)
          .sort();
      await expect.poll(counted, { timeout: 20_000, interval: 250 }).toEqual(['oversized-client 1', 'plain-text-client 1']);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
