import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type Server, type Socket, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OtlpSink, startOtlpSink } from '../support/otlp-sink.js';
import { ROOT, agentEnv, fixture, nodeArgs } from '../support/processes.js';

const run = promisify(execFile);

/** A collector that accepts connections and never answers: the worst case for an exporter. */
async function blackhole(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets: Socket[] = [];
  const server: Server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function probe(endpoint: string, requests: number, distinctIds: number, extra: Record<string, string> = {}) {
  const { stdout, stderr } = await run(process.execPath, ['--expose-gc', ...nodeArgs(fixture('load-probe.mjs'), true), String(requests), String(distinctIds)], {
    cwd: ROOT,
    env: agentEnv(endpoint, { OTEL_METRIC_EXPORT_INTERVAL: '100', ...extra }),
    timeout: 60_000,
  });
  return { result: JSON.parse(stdout) as Record<string, number>, stderr };
}

let hole: Awaited<ReturnType<typeof blackhole>>;
let sink: OtlpSink;
beforeAll(async () => {
  hole = await blackhole();
  sink = await startOtlpSink();
});
afterAll(async () => {
  await hole.close();
  await sink.close();
});

describe('an unreachable collector', () => {
  it('shutdown() returns within 2 s when the collector never answers, and memory stays bounded', async () => {
    const { result } = await probe(hole.url, 3000, 3000, { EXTSCOPE_SPANS: 'true' });
    expect(result['requestsCounted']).toBe(3000 + 1); // and the server/discover probe
    expect(result['shutdownMs']).toBeLessThan(2000);
    // 3000 distinct junk ids but the per-metric stream cap (10,000) and the id cap (1,000) hold.
    expect(result['extensionStreams']).toBeLessThanOrEqual(10_001);
    expect(result['overflowed']).toBeGreaterThan(0);
    expect(result['agentErrors']).toBe(0);
  });

  it('shutdown() returns within 2 s when nothing listens on the port at all', async () => {
    const closed = await blackhole();
    const url = closed.url;
    await closed.close();
    const { result } = await probe(url, 200, 10);
    expect(result['shutdownMs']).toBeLessThan(2000);
    expect(result['requestsCounted']).toBe(201);
  });
});

describe('zero-code entry, other situations', () => {
  it('on SIGTERM with no handler of the app, flushes what was counted, then still dies of the signal', async () => {
    // A long export interval: only the flush on the signal can deliver these counts.
    const child = spawn(process.execPath, nodeArgs(fixture('idle-server.mjs'), true), { cwd: ROOT, env: agentEnv(sink.url, { OTEL_METRIC_EXPORT_INTERVAL: '600000' }) });
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
    // load-probe reads the active agent; with the SDK disabled there is none, so it fails after serving.
    expect(stdout).toBe('');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(sink.exports).toBe(exportsBefore);
  });

  /** Runs a node command with a short self-check delay; expects nothing on stdout and returns stderr's lines. */
  async function selfCheckLines(args: string[], cwd: string): Promise<string[]> {
    const { stdout, stderr } = await run(process.execPath, args, { cwd, env: agentEnv(sink.url, { EXTSCOPE_SELF_CHECK_MS: '200' }), timeout: 30_000 });
    expect(stdout).toBe('');
    return stderr.trim().split('\n');
  }

  it('says once on stderr when the MCP SDK was loaded before extscope/register', async () => {
    expect(await selfCheckLines([fixture('late-register.cjs')], ROOT)).toEqual([
      "extscope: @modelcontextprotocol/server was loaded where extscope's hooks could not see it (before extscope/register?); its requests are not recorded.",
    ]);
  });

  it('says once on stderr when the loaded MCP SDK is a major it does not support', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'extscope-selfcheck-'));
    try {
      const pkg = join(dir, 'node_modules', '@modelcontextprotocol', 'server');
      await mkdir(pkg, { recursive: true });
      await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: '@modelcontextprotocol/server', version: '9.0.0', type: 'module', exports: './index.js' }));
      await writeFile(join(pkg, 'index.js'), 'export class Server { async connect() {} }\nexport class McpServer { async connect() {} }\n');
      await writeFile(join(dir, 'app.mjs'), "import { McpServer } from '@modelcontextprotocol/server';\nawait new McpServer().connect({});\nsetTimeout(() => {}, 600);\n");
      const register = pathToFileURL(join(ROOT, 'dist', 'agent', 'register', 'register.js')).href;
      expect(await selfCheckLines(['--import', register, join(dir, 'app.mjs')], dir)).toEqual([
        'extscope: @modelcontextprotocol/server@9.0.0 is loaded but not supported (supported: @modelcontextprotocol/server 2.x, @modelcontextprotocol/sdk 1.x); its requests are not recorded.',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
