import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCollector, startCollector } from '../../collector/index.js';
import { extensionCounts, matrixByClient, pollRequests } from '../support/matrix.js';
import { ROOT, agentEnv, feedStdin, fixture, rawStdioExchange } from '../support/processes.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const SEARCH = 'com.example/search';
const REPLAY = 'com.example/replay';
const LEGACY_ONLY = 'com.example/legacy-only';
const EXTSCOPE = join(ROOT, 'dist/bin/extscope.js');
const WRAP = [EXTSCOPE, 'wrap', '--'];

let collector: RunningCollector;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'extscope-wrap-'));
  collector = await startCollector({ dbPath: join(dir, 'extscope.db'), port: 0 });
});
afterAll(async () => {
  await collector?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The server process as a client's stdio configuration would name it: `extscope wrap -- node <fixture>`. */
const wrapped = (script: string, env: Record<string, string> = {}) => ({
  command: process.execPath,
  args: [...WRAP, process.execPath, fixture(script)],
  cwd: ROOT,
  env: agentEnv(collector.url, env),
  stderr: 'pipe' as const,
});

function run(
  argv: string[],
  env: Record<string, string> = {},
): { child: ChildProcess; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> } {
  const child = spawn(process.execPath, argv, { cwd: ROOT, env: agentEnv(collector.url, env), stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null, stderr }));
  return { child, exited };
}

describe('extscope wrap: a stdio server measured from outside', () => {
  it('counts every request of 2026-07-28, 2025-era and v1 clients exactly, with their declarations and negotiated ids', async () => {
    const service = 'wrapped-v2';
    // 2026-07-28 (per-request envelopes): server/discover and two calls.
    const alpha = new Client(
      { name: 'wrap-alpha', version: '1.0.0' },
      { capabilities: { extensions: { [TASKS]: {}, [REPLAY]: { maxAttempts: 3 } } }, versionNegotiation: { mode: 'auto' } },
    );
    await alpha.connect(new StdioClientTransport(wrapped('v2-stdio.mjs', { OTEL_SERVICE_NAME: service })));
    expect(alpha.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    await alpha.callTool({ name: 'echo', arguments: { text: 'a' } });
    await alpha.callTool({ name: 'fails', arguments: {} });
    await alpha.close();

    // 2025 era (v2 client): initialize declares search; the calls after it inherit it.
    const beta = new Client({ name: 'wrap-beta', version: '2.0.0' }, { capabilities: { extensions: { [SEARCH]: {} } } });
    await beta.connect(new StdioClientTransport(wrapped('v2-stdio.mjs', { OTEL_SERVICE_NAME: service })));
    expect(beta.getNegotiatedProtocolVersion()).not.toBe('2026-07-28');
    await beta.callTool({ name: 'echo', arguments: { text: 'b' } });
    await beta.close();

    // v1 client against a v1 server.
    const gamma = new V1Client({ name: 'wrap-gamma', version: '3.0.0' }, { capabilities: { extensions: { [LEGACY_ONLY]: {}, [TASKS]: {} } } });
    await gamma.connect(new V1StdioClientTransport(wrapped('v1-stdio.mjs', { OTEL_SERVICE_NAME: service })));
    await gamma.listTools();
    await gamma.callTool({ name: 'echo', arguments: { text: 'g' } });
    await gamma.callTool({ name: 'missing', arguments: {} });
    await gamma.close();

    await pollRequests(collector.url, { 'wrap-alpha@1.0.0': 3, 'wrap-beta@2.0.0': 2, 'wrap-gamma@3.0.0': 4 }, service);
    const rows = await matrixByClient(collector.url, service);
    const alphaRow = rows.get('wrap-alpha@1.0.0');
    expect(alphaRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 3 });
    // The auto client probes with server/discover in a first process, then starts the server again for its
    // session and reuses that answer: nothing on the second process's wire says what the server advertises, only
    // who it is (result _meta). The first wrapper wrote the answer down; the second uses it for the server that
    // names itself the same, as the client does: the server side is known on every request.
    expect(extensionCounts(alphaRow, TASKS)).toEqual({ client: 3, server: 3, negotiated: 3 });
    expect(extensionCounts(alphaRow, REPLAY)).toEqual({ client: 3, server: 0, negotiated: 0 });
    expect(extensionCounts(alphaRow, SEARCH)).toEqual({ client: 0, server: 3, negotiated: 0 });
    const betaRow = rows.get('wrap-beta@2.0.0');
    expect(betaRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 2 });
    expect(extensionCounts(betaRow, SEARCH)).toEqual({ client: 2, server: 2, negotiated: 2 });
    expect(extensionCounts(betaRow, TASKS)).toEqual({ client: 0, server: 2, negotiated: 0 });
    const gammaRow = rows.get('wrap-gamma@3.0.0');
    expect(gammaRow?.declaration).toEqual({ unknown: 0, none: 0, declared: 4 });
    expect(extensionCounts(gammaRow, LEGACY_ONLY)).toEqual({ client: 4, server: 0, negotiated: 0 });
    expect(extensionCounts(gammaRow, TASKS)).toEqual({ client: 4, server: 4, negotiated: 4 });
    // Nothing else was counted for this service.
    expect([...rows.values()].reduce((sum, row) => sum + row.requests, 0)).toBe(9);
  });

  it('names the service after serverInfo and gives each wrapped process its own instance id: a session that ends with its process and leaves the live list', async () => {
    for (let i = 0; i < 2; i++) {
      const client = new Client({ name: 'wrap-named', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new StdioClientTransport(wrapped('v2-stdio.mjs')));
      await client.close();
    }
    type Listed = { instances: { instanceId: string | null; transport: string | null; session: boolean; ended: string | null }[] };
    const listed = async (query: string): Promise<Listed['instances']> => {
      const response = await fetch(`${collector.url}/api/v1/instances?service=fixture-v2-esm${query}`);
      return ((await response.json()) as Listed).instances;
    };
    // Each process's last export says it ended: both are sessions, ended, listed only when ended ones are asked for.
    await expect
      .poll(async () => (await listed('&ended=true')).filter((instance) => instance.ended !== null).length, { timeout: 30_000, interval: 250 })
      .toBe(2);
    const sessions = await listed('&ended=true');
    expect(new Set(sessions.map((instance) => instance.instanceId)).size).toBe(2);
    expect(sessions.map((instance) => [instance.transport, instance.session])).toEqual([
      ['stdio', true],
      ['stdio', true],
    ]);
    expect(await listed('')).toEqual([]);
  });

  it('passes a corpus through byte for byte (both directions) and counts it, malformed lines and batches included', async () => {
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'wrap-raw', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
    };
    const corpus = [
      { jsonrpc: '2.0', id: 'probe', method: 'server/discover', params: { _meta: envelope } },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'é ✓ \u2028' }, _meta: envelope } },
      { jsonrpc: '2.0', id: 'two', method: 'tools/call', params: { name: 'fails', arguments: {}, _meta: envelope } },
      { jsonrpc: '2.0', id: 3, method: 'no/such/method', params: { _meta: envelope } },
    ];
    const env = agentEnv(collector.url, { OTEL_SERVICE_NAME: 'wrap-raw-service' });
    const plain = await rawStdioExchange(fixture('v2-stdio.mjs'), corpus, false, env);
    const through = await rawStdioExchange(fixture('v2-stdio.mjs'), corpus, false, env, [], { wrapper: WRAP });
    expect(through.code).toBe(0);
    expect(plain.code).toBe(0);
    expect(through.stdout.toString('utf8').split('\n')).toHaveLength(corpus.length + 1);
    expect(through.stdout.equals(plain.stdout)).toBe(true);
    await pollRequests(collector.url, { 'wrap-raw@1.0.0': 4 }, 'wrap-raw-service');

    // The child reads exactly what the client wrote, whatever it is: `cat` through wrap echoes it back.
    const bytes = Buffer.concat([
      Buffer.from('not json at all\n{"jsonrpc":"2.0","id":1,\n'),
      Buffer.from(
        `${JSON.stringify([
          { jsonrpc: '2.0', id: 'a', method: 'ping' },
          { jsonrpc: '2.0', method: 'notifications/initialized' },
        ])}\n`,
      ),
      Buffer.from([0xff, 0xfe, 0x00, 0x0a, 0xe2, 0x82]),
      Buffer.from('\xac no final newline'),
    ]);
    const { child, exited } = run([...WRAP, process.execPath, '-e', 'process.stdin.pipe(process.stdout)']);
    const echoed: Buffer[] = [];
    child.stdout!.on('data', (chunk: Buffer) => echoed.push(chunk));
    child.stdin!.end(bytes);
    expect((await exited).code).toBe(0);
    expect(Buffer.concat(echoed).equals(bytes)).toBe(true);
  });

  it('a server that exits right after stdin ends loses no count', async () => {
    const env = agentEnv(collector.url, { OTEL_SERVICE_NAME: 'wrap-eof', OTEL_METRIC_EXPORT_INTERVAL: '600000' });
    const corpus = [
      {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: { extensions: { [TASKS]: {} } }, clientInfo: { name: 'wrap-eof-client', version: '1.0.0' } },
      },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } },
      { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
    ];
    const result = await rawStdioExchange(fixture('exit-on-eof-stdio.mjs'), corpus, false, env, [], { wrapper: WRAP });
    expect(result.code).toBe(0);
    await pollRequests(collector.url, { 'wrap-eof-client@1.0.0': 3 }, 'wrap-eof');
    const row = (await matrixByClient(collector.url, 'wrap-eof')).get('wrap-eof-client@1.0.0');
    expect(extensionCounts(row, TASKS)).toEqual({ client: 3, server: 3, negotiated: 3 });
  });

  it("exits with the child's exit code, and dies of the child's signal", async () => {
    const code = run([...WRAP, process.execPath, '-e', 'process.exit(7)']);
    code.child.stdin!.end();
    expect((await code.exited).code).toBe(7);

    const killed = run([...WRAP, process.execPath, '-e', "process.kill(process.pid, 'SIGKILL')"]);
    killed.child.stdin!.end();
    expect((await killed.exited).signal).toBe('SIGKILL');

    const missing = run([...WRAP, join(dir, 'no-such-command')]);
    const result = await missing.exited;
    expect(result.code).toBe(127);
    expect(result.stderr).toContain('cannot run');
  });

  it('forwards SIGTERM to the child, which decides how to end', async () => {
    const script =
      "process.on('SIGTERM', () => { process.stderr.write('child got SIGTERM\\n'); process.exit(3); }); process.stdout.write('ready\\n'); setInterval(() => {}, 1000);";
    const { child, exited } = run([...WRAP, process.execPath, '-e', script]);
    await once(child.stdout!, 'data');
    child.kill('SIGTERM');
    const result = await exited;
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('child got SIGTERM');
  });

  it('passes a 100 MB line through unchanged and stays bounded in memory', async () => {
    const { child, exited } = run([...WRAP, process.execPath, '-e', 'process.stdin.pipe(process.stdout)']);
    const hash = createHash('sha256');
    let received = 0;
    let peak = 0;
    child.stdout!.on('data', (chunk: Buffer) => {
      hash.update(chunk);
      received += chunk.length;
    });
    const line = Buffer.alloc(1024 * 1024, 'a');
    line[0] = 0x7b; // `{`: a JSON-RPC message as far as the first byte tells
    const sent = createHash('sha256');
    // The wrapper (extscope), not the child, is the process whose peak RSS is read.
    const wrapper = child.pid!;
    for (let i = 0; i < 100; i++) {
      sent.update(line);
      if (!child.stdin!.write(line)) await once(child.stdin!, 'drain');
      if (i % 10 === 9) peak = Math.max(peak, await peakRss(wrapper));
    }
    const tail = Buffer.from('\n{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    sent.update(tail);
    child.stdin!.end(tail);
    const result = await exited;
    expect(result.code).toBe(0);
    expect(received).toBe(100 * 1024 * 1024 + tail.length);
    expect(hash.digest('hex')).toBe(sent.digest('hex'));
    // The frame reader gives up on a line past 16 MiB; holding the line would take well over 200 MB.
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(200 * 1024 * 1024);
  });

  it('counts a real server exactly past malformed lines, and a client leaving mid-message adds nothing', async () => {
    const envelope = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'wrap-resync', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
    };
    const line = (message: object) => Buffer.from(`${JSON.stringify(message)}\n`);
    const chunks = [
      line({ jsonrpc: '2.0', id: 'probe', method: 'server/discover', params: { _meta: envelope } }),
      Buffer.from('not json at all\n{"jsonrpc":"2.0","id":\n'),
      line({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'after' }, _meta: envelope } }),
      // The client leaves in the middle of its next message: stdin ends there.
      Buffer.from('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ec'),
    ];
    const env = agentEnv(collector.url, { OTEL_SERVICE_NAME: 'wrap-resync-service' });
    const plain = await feedStdin(process.execPath, [fixture('v2-stdio.mjs')], chunks, env);
    const through = await feedStdin(process.execPath, [...WRAP, process.execPath, fixture('v2-stdio.mjs')], chunks, env);
    expect(through.code).toBe(plain.code);
    expect(through.stdout.equals(plain.stdout)).toBe(true);
    // The server answered the two complete requests, whatever it made of the rest.
    expect(through.stdout.toString('utf8')).toContain('"id":"probe"');
    expect(through.stdout.toString('utf8')).toContain('"text":"after"');
    // wrap exports its last counts before it exits: these are final.
    await pollRequests(collector.url, { 'wrap-resync@1.0.0': 2 }, 'wrap-resync-service');
    const rows = await matrixByClient(collector.url, 'wrap-resync-service');
    expect([...rows.keys()]).toEqual(['wrap-resync@1.0.0']);
    expect(extensionCounts(rows.get('wrap-resync@1.0.0'), TASKS)).toEqual({ client: 2, server: 2, negotiated: 2 });
  });
});

/** A process's peak resident set (VmHWM), in bytes. */
async function peakRss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  return match === null ? 0 : Number(match[1]) * 1024;
}
