import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OtlpSink, startOtlpSink } from '../../support/otlp-sink.js';
import { ROOT, agentEnv, fixture, nodeArgs, stderrBesidesRecoveredExports } from '../../support/processes.js';

const run = promisify(execFile);
const TASKS = 'io.modelcontextprotocol/tasks';
const SEARCH = 'com.example/search';
const REPLAY = 'com.example/replay';
const CAPS = 'io.modelcontextprotocol/clientCapabilities';

let sink: OtlpSink;
beforeAll(async () => {
  sink = await startOtlpSink();
});
afterAll(() => sink.close());

/** Two calls with different per-request declarations, and a failing tool; returns what the client saw. */
async function exercise(client: Client): Promise<string[]> {
  const seen: string[] = [];
  const declared = await client.callTool({
    name: 'echo',
    arguments: { text: 'one' },
    _meta: { [CAPS]: { extensions: { [TASKS]: {}, [REPLAY]: { maxAttempts: 3 } } } },
  });
  seen.push((declared.content as { text: string }[])[0]!.text);
  const none = await client.callTool({ name: 'echo', arguments: { text: 'two' }, _meta: { [CAPS]: {} } });
  seen.push((none.content as { text: string }[])[0]!.text);
  const failed = await client.callTool({ name: 'fails', arguments: {} });
  seen.push(String(failed.isError));
  return seen;
}

function modernClient(name: string): Client {
  return new Client({ name, version: '1.0.0' }, { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: 'auto' } });
}

describe('node --import @extscope/agent/register, stdio', () => {
  for (const [script, server] of [
    ['v2-stdio.mjs', 'fixture-v2-esm'],
    ['v2-stdio.cjs', 'fixture-v2-cjs'],
  ] as const) {
    it(`${script}: the client works and the exported OTLP carries each request`, async () => {
      const clientName = `stdio-client-${script}`;
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: nodeArgs(fixture(script), true),
        cwd: ROOT,
        env: agentEnv(sink.url),
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      const client = modernClient(clientName);
      await client.connect(transport);
      expect(await exercise(client)).toEqual(['one', 'two', 'true']);
      await client.close();

      const call = { 'extscope.client.name': clientName, 'mcp.method.name': 'tools/call' };
      await expect.poll(() => sink.sum('extscope.requests', call), { timeout: 10_000 }).toBe(3);
      expect(sink.sum('extscope.requests', { ...call, 'extscope.client.declaration': 'declared' })).toBe(2);
      expect(sink.sum('extscope.requests', { ...call, 'extscope.client.declaration': 'none' })).toBe(1);
      expect(sink.sum('extscope.requests', { ...call, 'extscope.outcome': 'tool_error' })).toBe(1);
      expect(sink.sum('extscope.requests', { 'extscope.client.name': clientName, 'mcp.method.name': 'server/discover' })).toBe(1);
      expect(sink.sum('extscope.extension.requests', { ...call, 'extscope.extension.id': TASKS, 'extscope.extension.negotiated': true })).toBe(2);
      expect(
        sink.sum('extscope.extension.requests', {
          ...call,
          'extscope.extension.id': REPLAY,
          'extscope.extension.client_declared': true,
          'extscope.extension.negotiated': false,
        }),
      ).toBe(1);
      expect(
        sink.sum('extscope.extension.requests', {
          ...call,
          'extscope.extension.id': SEARCH,
          'extscope.extension.server_declared': true,
          'extscope.extension.client_declared': false,
        }),
      ).toBe(3);

      const request = sink.points.find((point) => point.metric === 'extscope.requests' && point.attributes['extscope.client.name'] === clientName);
      expect(request?.temporality).toBe(2); // CUMULATIVE
      expect(request?.resource['service.name']).toBe(server);
      expect(request?.resource['extscope.server.name']).toBe(server);
      expect(request?.resource['service.instance.id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(request?.resource['host.name']).toBeTruthy();
      // A stdio process serves one client session: its resource says so, and its last export says it ended.
      expect(request?.resource['extscope.server.transport']).toBe('stdio');
      const instance = request?.resource['service.instance.id'];
      const ended = (): number[] =>
        sink.points
          .filter((point) => point.metric === 'extscope.process.ended' && point.resource['service.instance.id'] === instance)
          .map((point) => point.value);
      await expect.poll(ended, { timeout: 10_000 }).toEqual([1]);
      const advertised = sink.points.filter((point) => point.metric === 'extscope.server.extension.advertised' && point.resource['service.name'] === server);
      expect(new Set(advertised.map((point) => point.attributes['extscope.extension.id']))).toEqual(new Set([TASKS, SEARCH]));
      expect(advertised.every((point) => /^[0-9a-f]{16}$/.test(String(point.attributes['extscope.extension.fingerprint'])))).toBe(true);

      await expect.poll(() => sink.spans.filter((span) => span.attributes['extscope.client.name'] === clientName).length, { timeout: 10_000 }).toBe(4);
      expect(stderrBesidesRecoveredExports(stderr)).toBe('');
    });
  }

  for (const [script, server] of [
    ['v1-stdio.mjs', 'fixture-v1-esm'],
    ['v1-stdio.cjs', 'fixture-v1-cjs'],
  ] as const) {
    it(`${script} (legacy SDK): the 2025 declaration comes from initialize`, async () => {
      const clientName = `legacy-client-${script}`;
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: nodeArgs(fixture(script), true),
        cwd: ROOT,
        env: agentEnv(sink.url, { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }),
        stderr: 'pipe',
      });
      const client = new Client({ name: clientName, version: '0.5.0' }, { capabilities: { extensions: { [TASKS]: {} } } });
      await client.connect(transport);
      await client.callTool({ name: 'echo', arguments: { text: 'x' } });
      await client.close();
      const legacy = { 'extscope.client.name': clientName, 'extscope.era': 'legacy', 'extscope.client.declaration': 'declared' };
      await expect.poll(() => sink.sum('extscope.requests', legacy), { timeout: 10_000 }).toBe(2);
      expect(
        sink.sum('extscope.extension.requests', {
          ...legacy,
          'mcp.method.name': 'tools/call',
          'extscope.extension.id': TASKS,
          'extscope.extension.negotiated': true,
        }),
      ).toBe(1);
      expect(sink.points.find((point) => point.attributes['extscope.client.name'] === clientName)?.resource['service.name']).toBe(server);
    });
  }
});

describe('node --import @extscope/agent/register, metrics only, stdio', () => {
  it('v2-stdio.mjs: 120 concurrent calls with alternating declarations are each counted under their own, and no span is made', async () => {
    const clientName = 'stdio-metrics-burst';
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: nodeArgs(fixture('v2-stdio.mjs'), true),
      cwd: ROOT,
      env: agentEnv(sink.url, { EXTSCOPE_SPANS: 'false' }),
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const client = modernClient(clientName);
    await client.connect(transport);
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const answers = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        client.callTool({ name: 'echo', arguments: { text: String(i) }, _meta: { [CAPS]: i % 2 === 0 ? { extensions: { [TASKS]: {} } } : {} } }),
      ),
    );
    expect(answers.map((answer) => (answer.content as { text: string }[])[0]!.text)).toEqual(Array.from({ length: 120 }, (_, i) => String(i)));
    await client.close();

    const call = { 'extscope.client.name': clientName, 'mcp.method.name': 'tools/call' };
    await expect.poll(() => sink.sum('extscope.requests', call), { timeout: 10_000 }).toBe(120);
    expect(sink.sum('extscope.requests', { ...call, 'extscope.client.declaration': 'declared' })).toBe(60);
    expect(sink.sum('extscope.requests', { ...call, 'extscope.client.declaration': 'none' })).toBe(60);
    expect(sink.sum('extscope.requests', { 'extscope.client.name': clientName })).toBe(121); // and the discover probe
    expect(sink.sum('extscope.extension.requests', { ...call, 'extscope.extension.id': TASKS, 'extscope.extension.negotiated': true })).toBe(60);
    expect(sink.spans.filter((span) => span.attributes['extscope.client.name'] === clientName)).toEqual([]);
    expect(stderrBesidesRecoveredExports(stderr)).toBe('');
  });
});

describe('settings values', () => {
  it('leave the process only when EXTSCOPE_CAPTURE_SETTINGS=true', async () => {
    for (const capture of [false, true]) {
      const clientName = `settings-client-${capture}`;
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: nodeArgs(fixture('v2-stdio.mjs'), true),
        cwd: ROOT,
        env: agentEnv(sink.url, capture ? { EXTSCOPE_CAPTURE_SETTINGS: 'true' } : {}),
        stderr: 'pipe',
      });
      const client = modernClient(clientName);
      await client.connect(transport);
      await client.callTool({
        name: 'echo',
        arguments: { text: 's' },
        _meta: { [CAPS]: { extensions: { [REPLAY]: { maxAttempts: 3, token: 'secret-value' } } } },
      });
      await client.close();
      const find = () => sink.spans.find((found) => found.attributes['extscope.client.name'] === clientName && found.name === 'tools/call echo');
      await expect.poll(find, { timeout: 10_000 }).toBeDefined();
      const span = find()!;
      expect(span.attributes['extscope.client.extensions']).toEqual([REPLAY]);
      expect((span.attributes['extscope.client.extension.fingerprints'] as string[])[0]).toMatch(/^[0-9a-f]{16}$/);
      const everything = JSON.stringify([...sink.spans, ...sink.points].filter((item) => JSON.stringify(item).includes(clientName)));
      if (capture) expect(span.attributes['extscope.client.extension.settings']).toEqual(['{"maxAttempts":3,"token":"secret-value"}']);
      else expect(everything).not.toContain('secret-value');
    }
  });
});

describe('node --import @extscope/agent/register, metrics only, HTTP (createMcpHandler behind @modelcontextprotocol/node)', () => {
  it('counts modern and 2025-era requests exactly without ever entering an AsyncLocalStorage (which every promise would pay for)', async () => {
    const child = spawn(process.execPath, nodeArgs(fixture('v2-http.mjs'), true, [fixture('async-context-probe.mjs')]), {
      cwd: ROOT,
      env: agentEnv(sink.url, { EXTSCOPE_SPANS: 'false' }),
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const [first] = (await once(child.stdout, 'data')) as [Buffer];
    const url = new URL(`http://127.0.0.1:${(JSON.parse(first.toString('utf8')) as { port: number }).port}/mcp`);
    const exited = once(child, 'exit');
    try {
      const modern = modernClient('http-metrics-modern');
      await modern.connect(new StreamableHTTPClientTransport(url));
      expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      await modern.callTool({ name: 'echo', arguments: { text: 'modern' } });
      await modern.close();
      const legacy = new Client({ name: 'http-metrics-legacy', version: '0.1.0' }, { capabilities: { extensions: { [TASKS]: {} } } });
      await legacy.connect(new StreamableHTTPClientTransport(url));
      await legacy.callTool({ name: 'echo', arguments: { text: 'legacy' } });
      await legacy.close();
      const requests = (match: Record<string, string>) => sink.sum('extscope.requests', { 'extscope.server.name': 'fixture-v2-http-esm', ...match });
      await expect.poll(() => requests({ 'extscope.client.name': 'http-metrics-modern', 'mcp.method.name': 'tools/call' }), { timeout: 10_000 }).toBe(1);
      // The legacy fallback's instances see a clone of the request: its initialize is still counted once, by the
      // instance (the call after it names no client: its instance never saw that initialize).
      await expect.poll(() => requests({ 'extscope.client.name': 'http-metrics-legacy', 'mcp.method.name': 'initialize' }), { timeout: 10_000 }).toBe(1);
      expect(sink.sum('extscope.requests', { 'extscope.client.name': 'http-metrics-legacy' })).toBe(1);
      expect(sink.sum('extscope.requests', { 'extscope.client.name': 'http-metrics-modern' })).toBe(2);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    expect(stderr).toContain('async-context {"run":0,"enterWith":0}');
  });
});

describe('node --import @extscope/agent/register, HTTP (createMcpHandler behind @modelcontextprotocol/node)', () => {
  for (const [script, server] of [
    ['v2-http.mjs', 'fixture-v2-http-esm'],
    ['v2-http.cjs', 'fixture-v2-http-cjs'],
  ] as const) {
    it(`${script}: per-request instances, legacy fallback, and answers given before any instance`, async () => {
      const child = spawn(process.execPath, nodeArgs(fixture(script), true), { cwd: ROOT, env: agentEnv(sink.url) });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
      });
      const [first] = (await once(child.stdout, 'data')) as [Buffer];
      const { port } = JSON.parse(first.toString('utf8')) as { port: number };
      const url = new URL(`http://127.0.0.1:${port}/mcp`);
      const exited = once(child, 'exit');
      const endedBefore = sink.points.filter((point) => point.metric === 'extscope.process.ended').length;
      try {
        const clientName = `http-client-${script}`;
        const client = modernClient(clientName);
        await client.connect(new StreamableHTTPClientTransport(url));
        expect(await exercise(client)).toEqual(['one', 'two', 'true']);
        await client.close();

        const legacyName = `http-legacy-${script}`;
        const legacy = new Client({ name: legacyName, version: '0.1.0' }, { capabilities: { extensions: { [TASKS]: {} } } });
        await legacy.connect(new StreamableHTTPClientTransport(url));
        await legacy.callTool({ name: 'echo', arguments: { text: 'legacy' } });
        await legacy.close();

        // A revision this server does not serve is refused by the entry itself, before any server instance.
        const refused = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2099-01-01' },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 9,
            method: 'tools/list',
            params: {
              _meta: {
                'io.modelcontextprotocol/protocolVersion': '2099-01-01',
                'io.modelcontextprotocol/clientInfo': { name: `future-${script}`, version: '9' },
                [CAPS]: { extensions: { [TASKS]: {} } },
              },
            },
          }),
        });
        const refusal = (await refused.json()) as { error?: { code: number } };
        expect(refusal.error?.code).toBeLessThan(0);

        const call = { 'extscope.client.name': clientName, 'mcp.method.name': 'tools/call' };
        await expect.poll(() => sink.sum('extscope.requests', call), { timeout: 10_000 }).toBe(3);
        expect(sink.sum('extscope.requests', { ...call, 'extscope.client.declaration': 'declared', 'extscope.server.name': server })).toBe(2);
        expect(sink.sum('extscope.extension.requests', { ...call, 'extscope.extension.id': TASKS, 'extscope.extension.negotiated': true })).toBe(2);
        await expect
          .poll(
            () =>
              sink.sum('extscope.requests', { 'extscope.client.name': legacyName, 'mcp.method.name': 'initialize', 'extscope.client.declaration': 'declared' }),
            { timeout: 10_000 },
          )
          .toBe(1);
        await expect
          .poll(
            () =>
              sink.sum('extscope.requests', {
                'extscope.client.name': `future-${script}`,
                'extscope.server.declaration': 'unknown',
                'rpc.response.status_code': String(refusal.error?.code),
              }),
            { timeout: 10_000 },
          )
          .toBe(1);
        expect(
          sink.sum('extscope.extension.requests', {
            'extscope.client.name': `future-${script}`,
            'extscope.extension.id': TASKS,
            'extscope.extension.client_declared': true,
            'extscope.extension.server_declared': false,
          }),
        ).toBe(1);
        const served = sink.points.find((point) => point.metric === 'extscope.requests' && point.attributes['extscope.client.name'] === clientName);
        expect(served?.resource['extscope.server.transport']).toBe('http');
        expect(sink.points.filter((point) => point.metric === 'extscope.process.ended')).toHaveLength(endedBefore);
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
      // The export made on the way out is the last, and says so.
      expect(sink.points.filter((point) => point.metric === 'extscope.process.ended').length).toBe(endedBefore + 1);
      expect(stderrBesidesRecoveredExports(stderr)).toBe('');
    });
  }
});

describe('zero-code entry, other situations', () => {
  it('on SIGTERM with no handler of the app, flushes what was counted, then still dies of the signal', async () => {
    // A long export interval: only the flush on the signal can deliver these counts.
    const child = spawn(process.execPath, nodeArgs(fixture('idle-server.mjs'), true), {
      cwd: ROOT,
      env: agentEnv(sink.url, { OTEL_METRIC_EXPORT_INTERVAL: '600000' }),
    });
    const [line] = (await once(child.stdout, 'data')) as [Buffer];
    expect(line.toString('utf8')).toBe('ready\n');
    expect(sink.sum('extscope.requests', { 'extscope.server.name': 'idle-server' })).toBe(0);
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    child.kill('SIGTERM');
    const [code, signal] = await exited;
    expect([code, signal]).toEqual([null, 'SIGTERM']);
    await expect.poll(() => sink.sum('extscope.requests', { 'extscope.server.name': 'idle-server' }), { timeout: 5_000 }).toBe(2);
  });

  it('uses the application’s own OpenTelemetry SDK instead of starting a second one', async () => {
    const { stdout } = await run(process.execPath, nodeArgs(fixture('own-sdk.mjs'), true), { cwd: ROOT, env: agentEnv(sink.url), timeout: 30_000 });
    const { names, requests } = JSON.parse(stdout) as { names: string[]; requests: number };
    expect(names).toContain('extscope.requests');
    expect(names).toContain('extscope.extension.requests');
    expect(requests).toBe(2); // server/discover + tools/call
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(sink.points.filter((point) => point.resource['service.name'] === 'own-sdk-app')).toEqual([]);
  });

  it('OTEL_SDK_DISABLED=true installs nothing and exports nothing', async () => {
    const exportsBefore = sink.exports;
    const { stdout } = await run(process.execPath, nodeArgs(fixture('load-probe.mjs'), true).concat(['5', '1']), {
      cwd: ROOT,
      env: agentEnv(sink.url, { OTEL_SDK_DISABLED: 'true' }),
      timeout: 30_000,
    }).catch((error: { stdout: string; stderr: string }) => error);
    // load-probe reads the counts through the active agent; with the SDK disabled there is none, so it fails after serving.
    expect(stdout).toBe('');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(sink.exports).toBe(exportsBefore);
  });
});
