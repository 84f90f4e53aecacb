import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, readdirSync } from 'node:fs';
import { type Server, type Socket, createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type ProcessEntry, alive, processes } from '../support/proc-tree.js';
import { ROOT, agentEnv, fixture } from '../support/processes.js';

/**
 * How `extscope wrap` ends. Found by the reliability probe: with a collector that accepts the connection and never
 * answers, the wrapper exited 2.1–2.3 s after its stdin closed (the last export's own 2 s timeout, or the one
 * OTEL_EXPORTER_OTLP_TIMEOUT configures, held the process), where the documentation promises 1.5 s; and a wrapper
 * killed with SIGKILL left its server running. Real wrappers (the built CLI), real servers, a real TCP listener.
 */

const EXTSCOPE = join(ROOT, 'dist/bin/extscope.js');
/** docs/wrap-and-proxy.md: extscope exits after exporting the last counts, within 1.5 s even when the collector is down. */
const DOCUMENTED_EXIT_MS = 1500;
/** The server's own exit after its stdin closed, and a loaded machine's scheduling; the old 2 s timeout is past it. */
const MARGIN_MS = 450;
const TASKS = 'io.modelcontextprotocol/tasks';

/** A collector that accepts every connection, reads what it is sent, and never answers. */
let silent: Server;
let port: number;
const sockets: Socket[] = [];
beforeAll(async () => {
  silent = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => {});
    socket.resume();
  });
  silent.listen(0, '127.0.0.1');
  await once(silent, 'listening');
  port = (silent.address() as { port: number }).port;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  silent?.close();
});

const started: ProcessEntry[] = [];
afterEach(() => {
  // A server the wrapper failed to take with it must not outlive the test.
  for (const entry of started.splice(0)) if (alive(entry)) process.kill(entry.pid, 'SIGKILL');
});

function wrap(args: string[], env: Record<string, string>): { child: ChildProcessWithoutNullStreams; lines: () => string[]; stderr: () => string } {
  const child = spawn(process.execPath, [EXTSCOPE, 'wrap', '--', process.execPath, ...args], { cwd: ROOT, env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return { child, lines: () => stdout.split('\n').filter((line) => line.length > 0), stderr: () => stderr };
}

async function until(condition: () => boolean, what: string, withinMs = 15_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const initialize = (client: string) => ({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: { extensions: { [TASKS]: {} } }, clientInfo: { name: client, version: '1.0.0' } },
});
const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } };

describe('extscope wrap ends when its server does, and its server ends when it does', () => {
  for (const [name, extra] of [
    ['the default export timeout', {}],
    ['OTEL_EXPORTER_OTLP_TIMEOUT=10000', { OTEL_EXPORTER_OTLP_TIMEOUT: '10000' }],
  ] as const) {
    it(`exits within the documented 1.5 s of stdin closing when the collector accepts and never answers (${name})`, async () => {
      // No periodic export during the exchange: the last one, at exit, is the one that meets the silent collector.
      const env = agentEnv(`http://127.0.0.1:${port}`, { OTEL_SERVICE_NAME: 'wrap-silent-collector', OTEL_METRIC_EXPORT_INTERVAL: '600000', ...extra });
      const { child, lines, stderr } = wrap([fixture('exit-on-eof-stdio.mjs')], env);
      const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
      child.stdin.write(`${JSON.stringify(initialize('silent-collector-client'))}\n`);
      await until(() => lines().length === 1, 'the answer to initialize');
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n${JSON.stringify(call)}\n`);
      await until(() => lines().length === 2, 'the answer to the call');
      const accepted = sockets.length;
      const closedAt = performance.now();
      child.stdin.end();
      const [code, signal] = await exited;
      const tookMs = performance.now() - closedAt;
      expect({ code, signal }).toEqual({ code: 0, signal: null });
      // The last export did reach the listener (a connection more), and was never answered.
      expect(sockets.length).toBeGreaterThan(accepted);
      expect(tookMs).toBeLessThan(DOCUMENTED_EXIT_MS + MARGIN_MS);
      // Its failure is said, as for any export that fails.
      expect(stderr()).toMatch(/extscope: exporting metrics to http:\/\/127\.0\.0\.1:\d+\/v1\/metrics fails \(Request timed out\)/);
    });
  }

  it('a wrapper killed with SIGKILL takes its server with it, even one that outlives its stdin', async () => {
    const env = agentEnv(`http://127.0.0.1:${port}`, { OTEL_SERVICE_NAME: 'wrap-killed', FIXTURE_EXTENSIONS: '{}' });
    const { child, lines, stderr } = wrap([fixture('configured-extensions-stdio.mjs'), '--linger'], env);
    child.stdin.write(`${JSON.stringify(initialize('killed-wrapper-client'))}\n`);
    await until(() => lines().length === 1 && /pid (\d+)/.test(stderr()), 'the server answering and naming its pid');
    const pid = Number(/pid (\d+)/.exec(stderr())![1]);
    const server = processes().find((entry) => entry.pid === pid);
    expect(server?.ppid).toBe(child.pid);
    started.push(server!);
    child.kill('SIGKILL');
    expect((await once(child, 'exit'))[1]).toBe('SIGKILL');
    await until(() => !alive(server!), 'the server ending after its wrapper was killed', 5_000);
  });

  it('a wrapper that ends normally leaves no watchdog behind and its server ends by itself, with its own exit code', async () => {
    const env = agentEnv(`http://127.0.0.1:${port}`, { OTEL_SERVICE_NAME: 'wrap-normal-end' });
    const { child, stderr } = wrap(
      ['-e', "process.stderr.write(`pid ${process.pid}\\n`); process.stdin.on('end', () => setTimeout(() => process.exit(7), 300)); process.stdin.resume();"],
      env,
    );
    await until(() => /pid (\d+)/.test(stderr()), 'the server naming its pid');
    const pid = Number(/pid (\d+)/.exec(stderr())![1]);
    // While the server runs, one watchdog waits on the wrapper.
    await until(() => watchdogsOf(pid).length === 1, 'the watchdog starting', 5_000);
    child.stdin.end();
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(7);
    // The watchdog, told the server ended, is gone too (it ends at once when told).
    await until(() => watchdogsOf(pid).length === 0, 'the watchdog ending', 5_000);
  });
});

/** Processes whose command line is a wrapper's watchdog for `pid`. */
function watchdogsOf(pid: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (argv.includes('extscope-wrap-watchdog') && argv.includes(String(pid))) found.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}
