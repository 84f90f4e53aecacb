import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../support/counting-clients.js';
import { type OtlpSink, startOtlpSink } from '../../support/otlp-sink.js';
import { ROOT, agentEnv, fixture, nodeArgs } from '../../support/processes.js';

const SERVER = 'Basic MCP App Server (Vanilla JS)';
const UNRECORDED = 'extscope: MCP requests arrive on stdin but none was recorded';

let sink: OtlpSink;
beforeAll(async () => {
  sink = await startOtlpSink();
});
afterAll(() => sink.close());

/** A v1 client's session (initialize, tools/list, tools/call) with a stdio server; stderr once it has settled. */
async function session(args: string[], env: Record<string, string>, clientName: string): Promise<{ stderr: () => string; close: () => Promise<void> }> {
  const transport = new StdioClientTransport({ command: process.execPath, args, cwd: ROOT, env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const client = new Client({ name: clientName, version: '1.0.0' }, { capabilities: { extensions: { 'io.modelcontextprotocol/ui': {} } } });
  await client.connect(transport);
  const { tools } = await client.listTools();
  await client.callTool({ name: tools[0]!.name, arguments: {} });
  return { stderr: () => stderr, close: () => client.close() };
}

describe('instrumentServer(): a bundled server next to a patched SDK copy', () => {
  const env = (attach: boolean) => agentEnv(sink.url, { EXTSCOPE_SELF_CHECK_MS: '300', ...(attach && { EXTSCOPE_ATTACH: '1' }) });

  it('unattached: nothing can be recorded, and stderr says so once, with what to do', async () => {
    const running = await session(nodeArgs(fixture('apps-beside-sdk.mjs'), true), env(false), 'unattached-client');
    try {
      await expect.poll(running.stderr, { timeout: 10_000 }).toContain(UNRECORDED);
      expect(running.stderr()).toContain('instrumentServer(server)');
      expect(running.stderr().split(UNRECORDED)).toHaveLength(2);
    } finally {
      await running.close();
    }
    expect(sink.sum('extscope.requests', { 'extscope.client.name': 'unattached-client' })).toBe(0);
  });

  it('attached by hand: every request is recorded for the bundled server, and no warning', async () => {
    const running = await session(nodeArgs(fixture('apps-beside-sdk.mjs'), true), env(true), 'attached-client');
    await running.close();
    await expect.poll(() => sink.sum('extscope.requests', { 'extscope.client.name': 'attached-client' }), { timeout: 10_000 }).toBe(3);
    expect(
      sink.sum('extscope.requests', { 'extscope.client.name': 'attached-client', 'extscope.server.name': SERVER, 'extscope.client.declaration': 'declared' }),
    ).toBe(3);
    expect(running.stderr()).not.toContain(UNRECORDED);
  });

  it('the wire fallback switched off (EXTSCOPE_WIRE_FALLBACK=false): a bundled server is unseen, and stderr says so', async () => {
    const bin = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-basic-vanillajs')), 'index.js');
    const running = await session([...nodeArgs(bin, true), '--stdio'], { ...env(false), EXTSCOPE_WIRE_FALLBACK: 'false' }, 'fallback-off-client');
    try {
      await expect.poll(running.stderr, { timeout: 10_000 }).toContain(UNRECORDED);
      expect(running.stderr()).toContain('EXTSCOPE_WIRE_FALLBACK=false');
    } finally {
      await running.close();
    }
    expect(sink.sum('extscope.requests', { 'extscope.client.name': 'fallback-off-client' })).toBe(0);
  });

  it('the wire fallback switched off, a bundled server over HTTP: unseen, and stderr says so once, naming HTTP', async () => {
    const bin = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-basic-vanillajs')), 'index.js');
    const port = await freePort();
    const server = spawn(process.execPath, nodeArgs(bin, true), {
      cwd: ROOT,
      env: { ...env(false), EXTSCOPE_WIRE_FALLBACK: 'false', PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = once(server, 'exit');
    let stderr = '';
    server.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const unrecordedHttp = 'extscope: MCP requests arrive over HTTP but none was recorded';
    try {
      await once(server.stdout, 'data');
      const client = new Client({ name: 'http-fallback-off-client', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`)));
      const { tools } = await client.listTools();
      await client.callTool({ name: tools[0]!.name, arguments: {} });
      await client.close();
      await expect.poll(() => stderr, { timeout: 10_000 }).toContain(unrecordedHttp);
      expect(stderr).toContain('EXTSCOPE_WIRE_FALLBACK=false');
      expect(stderr.split(unrecordedHttp)).toHaveLength(2);
    } finally {
      server.kill('SIGTERM');
      await exited;
    }
    expect(sink.sum('extscope.requests', { 'extscope.client.name': 'http-fallback-off-client' })).toBe(0);
  });
});
