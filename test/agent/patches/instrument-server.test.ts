import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instrumentServer } from '../../../agent/index.js';
import { bundleFixture } from '../bundle.js';
import { instrumentation, requestCount } from '../harness.js';

interface BundledSdk {
  McpServer: new (info: { name: string; version: string }, options?: object) => { connect(transport: unknown): Promise<void>; server: object };
  InMemoryTransport: { createLinkedPair(): [unknown, unknown] };
}

let dir: string;
let sdk: BundledSdk;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'extscope-instrument-server-'));
  sdk = (await import(pathToFileURL(await bundleFixture('bundled-sdk-exports.mjs', dir)).href)) as BundledSdk;
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function talk(server: { connect(transport: unknown): Promise<void> }, clientName: string, attach: (connected: boolean) => void, connectFirst: boolean) {
  const [clientSide, serverSide] = sdk.InMemoryTransport.createLinkedPair();
  if (!connectFirst) attach(false);
  await server.connect(serverSide);
  if (connectFirst) attach(true);
  const client = new Client({ name: clientName, version: '1.0.0' });
  await client.connect(clientSide as never);
  await client.ping();
  await client.close();
}

describe('instrumentServer(): a server object of any SDK copy, attached by hand', () => {
  it('refuses what is not an MCP server, changing nothing', () => {
    const notAServer = { connect: () => {} };
    expect(instrumentServer(notAServer)).toBe(false);
    expect(instrumentServer(null)).toBe(false);
    expect(Object.keys(notAServer)).toEqual(['connect']);
  });

  it('a bundled copy is not patched by the hooks: unattached, its requests are not recorded', async () => {
    await talk(new sdk.McpServer({ name: 'bundled-unattached', version: '1' }), 'manual-none', () => {}, false);
    expect(await requestCount('manual-none')).toBe(0);
  });

  it('attached before connect (an McpServer): every request recorded, with the server it advertises', async () => {
    const server = new sdk.McpServer({ name: 'bundled-attached', version: '1' }, { capabilities: { extensions: { 'com.example/search': {} } } });
    await talk(server, 'manual-before', () => expect(instrumentServer(server)).toBe(true), false);
    // initialize, ping.
    expect(await requestCount('manual-before')).toBe(2);
    expect(await requestCount('manual-before', { 'extscope.server.name': 'bundled-attached', 'extscope.server.declaration': 'declared' })).toBe(2);
    expect(instrumentation.status.patched.has('instrumentServer()')).toBe(true);
  });

  it('attached after connect (its Server): the transport already connected is observed from then on', async () => {
    const server = new sdk.McpServer({ name: 'bundled-late', version: '1' });
    await talk(server, 'manual-after', () => expect(instrumentation.instrumentServer(server.server)).toBe(true), true);
    expect(await requestCount('manual-after')).toBe(2);
  });
});
