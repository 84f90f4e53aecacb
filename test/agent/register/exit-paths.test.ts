/**
 * Every way a server process ends on which Node.js runs code: what the agent counted reaches a real collector
 * although the periodic export (10 minutes here) never ran, and the process ends as it would without the agent:
 * the same exit code or signal, the same stderr, nothing on stdout beyond the server's answers. An unreachable
 * collector holds no exit up for more than the final export's bound.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { type Server, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCollector, startCollector } from '../../../collector/index.js';
import { ROOT, agentEnv, fixture, nodeArgs } from '../../support/processes.js';
import { requestsOfService } from '../../support/matrix.js';

type Mode = 'drain' | 'exit' | 'throw' | 'reject' | 'signal' | 'signal-app';

interface Ending {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  /** stderr without the fixture's own `ready` line. */
  stderr: string;
  /** From closing stdin (or sending the signal) to the exit. */
  exitMs: number;
}

/** The session every test runs: initialize, tools/list, tools/call (3 requests) under `clientName`. */
function session(clientName: string): object[] {
  return [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: clientName, version: '1.0.0' } },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'bye' } } },
  ];
}

/**
 * Runs the fixture in `mode` (with or without the agent), speaks the session, then closes stdin, and for the
 * signal modes sends `signal` once the answers are in.
 */
async function run(mode: Mode, agent: boolean, env: Record<string, string>, clientName: string, signal?: NodeJS.Signals): Promise<Ending> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [...nodeArgs(fixture('exit-paths.mjs'), agent), mode], { cwd: ROOT, env });
  let stdout = '';
  let stderr = '';
  let onLine: (() => void) | undefined;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    onLine?.();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    onLine?.();
  });
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (code, sig) => resolve([code, sig])));
  const until = (accept: () => boolean, what: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${what}: stdout ${stdout} stderr ${stderr}`)), 20_000);
      onLine = () => {
        if (!accept()) return;
        clearTimeout(timer);
        onLine = undefined;
        resolve();
      };
      onLine();
    });
  await until(() => stderr.includes('ready\n'), 'no ready line');
  let answers = 0;
  for (const message of session(clientName)) {
    child.stdin.write(`${JSON.stringify(message)}\n`);
    if ('id' in message) {
      answers++;
      await until(() => stdout.split('\n').filter((line) => line.length > 0).length >= answers, `no answer to ${JSON.stringify(message)}`);
    }
  }
  const started = performance.now();
  if (signal === undefined) child.stdin.end();
  else child.kill(signal);
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const [code, sig] = await exited;
  clearTimeout(killer);
  return { code, signal: sig, stdout, stderr: stderr.replace('ready\n', ''), exitMs: performance.now() - started };
}

let collector: RunningCollector;
let dir: string;
let hole: Server;
let holeUrl: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'extscope-exit-'));
  collector = await startCollector({ dbPath: join(dir, 'extscope.db'), port: 0 });
  // A collector that accepts connections and never answers.
  hole = createServer((socket) => socket.on('error', () => {}));
  await new Promise<void>((resolve) => hole.listen(0, '127.0.0.1', resolve));
  holeUrl = `http://127.0.0.1:${(hole.address() as { port: number }).port}`;
});
afterAll(async () => {
  await collector?.close();
  hole?.close();
  await rm(dir, { recursive: true, force: true });
});

/** No periodic export during the test: only the way out can carry the counts. */
const quiet = (endpoint: string, service: string) =>
  agentEnv(endpoint, { OTEL_METRIC_EXPORT_INTERVAL: '600000', EXTSCOPE_SPANS: 'false', OTEL_SERVICE_NAME: service });

/** Every request the collector holds under `service`. */
const counted = (service: string): Promise<number> => requestsOfService(collector.url, service);

async function expectCounted(service: string, requests: number): Promise<void> {
  await expect.poll(() => counted(service), { timeout: 15_000, interval: 200 }).toBe(requests);
}

/** Stack traces name the same files either way; only timings could differ, and none is printed. */
const CASES: { mode: Mode; signal?: NodeJS.Signals; title: string }[] = [
  { mode: 'exit', title: 'process.exit() from the server on stdin EOF' },
  { mode: 'drain', title: 'the event loop draining after stdin EOF' },
  { mode: 'throw', title: 'an uncaught exception' },
  { mode: 'reject', title: 'an unhandled rejection' },
  { mode: 'signal', signal: 'SIGTERM', title: 'SIGTERM with no listener of the app' },
  { mode: 'signal', signal: 'SIGINT', title: 'SIGINT with no listener of the app' },
  { mode: 'signal', signal: 'SIGHUP', title: 'SIGHUP with no listener of the app' },
  { mode: 'signal-app', signal: 'SIGTERM', title: "SIGTERM handled by the app's own process.exit" },
];

describe('counts reach the collector on every way out', () => {
  for (const { mode, signal, title } of CASES) {
    it(`${title}: 3 of 3 counted; exit code, signal, stdout and stderr as without the agent`, async () => {
      const clientName = `exit-${mode}-${signal ?? 'eof'}`;
      const bare = await run(mode, false, quiet(collector.url, `${clientName}-bare`), clientName, signal);
      const instrumented = await run(mode, true, quiet(collector.url, clientName), clientName, signal);
      expect({ code: instrumented.code, signal: instrumented.signal }).toEqual({ code: bare.code, signal: bare.signal });
      expect(instrumented.stdout).toBe(bare.stdout);
      expect(instrumented.stderr).toBe(bare.stderr);
      await expectCounted(clientName, 3);
    });
  }

  it('process.exit() with the collector unreachable: the exit waits at most the 1.5 s bound, exit code kept', async () => {
    const instrumented = await run('exit', true, quiet(holeUrl, 'exit-unreachable'), 'exit-unreachable');
    expect(instrumented.code).toBe(3);
    expect(instrumented.exitMs).toBeLessThan(3000);
  });
});
