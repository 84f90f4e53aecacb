/**
 * Two of everything on one host, every port moved by its documented flag or variable: two `npm run demo`s (`--port`,
 * `--grpc-port`), two collectors (`--port`, `--grpc-port`) and two OpenTelemetry Collectors run with
 * deploy/otelcol/extscope.yaml (`OTELCOL_OTLP_GRPC_ENDPOINT`, `OTELCOL_OTLP_HTTP_ENDPOINT`, and its own telemetry,
 * `OTELCOL_TELEMETRY_PORT`). All start side by side, each listens on exactly the ports it was given (and the demo's
 * MCP servers on free ones), none on a default port (4317, 4318, 8888), each demo's collector counts its own fleet,
 * and every one stops cleanly.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { type ChildCollector, spawnCollector, tempDir } from '../collector/helpers/collector.js';
import { freePort } from '../support/counting-clients.js';
import { descendants } from '../support/proc-tree.js';
import { ROOT } from '../support/processes.js';

const DEFAULT_PORTS = [4317, 4318, 8888];
/** Bounds on waiting for a process to start, not timings: the machine may be busy with other test runs. */
const START_WITHIN_MS = 120_000;

interface Started {
  name: string;
  child: ChildProcess;
  output: string;
  /** The ports it was told to take. */
  ports: number[];
}
const started: Started[] = [];
let dir: Awaited<ReturnType<typeof tempDir>> | undefined;

afterAll(async () => {
  for (const entry of started) {
    if (entry.child.exitCode !== null || entry.child.signalCode !== null) continue;
    try {
      process.kill(-entry.child.pid!, 'SIGKILL');
    } catch {
      entry.child.kill('SIGKILL');
    }
  }
  await dir?.cleanup();
});

/** Starts a child in a process group of its own; resolves once its output matches `ready`. */
async function start(name: string, command: string, args: string[], env: NodeJS.ProcessEnv, ports: number[], ready: RegExp): Promise<Started> {
  const child = spawn(command, args, { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const entry: Started = { name, child, output: '', ports };
  started.push(entry);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${entry.output}`)), START_WITHIN_MS);
    const onData = (chunk: Buffer): void => {
      entry.output += chunk.toString('utf8');
      if (ready.test(entry.output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}) before it was ready:\n${entry.output}`));
    });
  });
  return entry;
}

/** The TCP ports each of these processes (and their descendants) listens on, from `ss`. */
function listening(roots: number[]): Map<number, number[]> {
  const owners = new Map<number, number>();
  for (const root of roots) for (const pid of [root, ...descendants(root).map((entry) => entry.pid)]) owners.set(pid, root);
  const byRoot = new Map<number, number[]>(roots.map((root) => [root, []]));
  for (const line of execFileSync('ss', ['-ltnpH'], { encoding: 'utf8' }).split('\n')) {
    // State, Recv-Q, Send-Q, the local address (127.0.0.1:4318, [::1]:4318, *:4318), the peer, the process.
    const local = line.trim().split(/\s+/)[3] ?? '';
    const port = Number(local.slice(local.lastIndexOf(':') + 1));
    for (const match of line.matchAll(/pid=(\d+)/g)) {
      const root = owners.get(Number(match[1]));
      if (root !== undefined && Number.isInteger(port)) byRoot.get(root)!.push(port);
    }
  }
  for (const [root, ports] of byRoot)
    byRoot.set(
      root,
      [...new Set(ports)].sort((a, b) => a - b),
    );
  return byRoot;
}

async function requestsIn(url: string): Promise<number> {
  const response = await fetch(`${url}/api/v1/matrix?from=-1h`).catch(() => undefined);
  if (response?.ok !== true) return 0;
  const body = (await response.json()) as { rows: { requests: number }[] };
  return body.rows.reduce((sum, row) => sum + row.requests, 0);
}

describe('every port moved: two demos, two collectors and two OpenTelemetry Collectors on one host', () => {
  it(
    'start side by side on exactly their own ports, none on a default one, each demo counted by its own collector, and stop cleanly',
    { timeout: 600_000 },
    async () => {
      dir = await tempDir();
      const { stdout } = await promisify(execFile)('bash', [join(ROOT, 'scripts/build-otelcol.sh')], { timeout: 40 * 60_000, maxBuffer: 16 << 20 });
      const otelcol = stdout.trim().split('\n').at(-1)!;
      const ports: number[] = [];
      const port = async (): Promise<number> => {
        let chosen = await freePort();
        while (ports.includes(chosen)) chosen = await freePort();
        ports.push(chosen);
        return chosen;
      };

      const demos: { entry: Started; url: string }[] = [];
      for (const name of ['demo-a', 'demo-b']) {
        const [http, grpc] = [await port(), await port()];
        const entry = await start(
          name,
          process.execPath,
          ['scripts/demo.mjs', '--port', String(http), '--grpc-port', String(grpc), '--duration', '300'],
          { ...process.env, EXTSCOPE_PORT: '', EXTSCOPE_GRPC_PORT: '' },
          [http, grpc],
          /Ctrl-C stops the demo/,
        );
        expect(entry.output).toContain(`collector on http://127.0.0.1:${http},`);
        demos.push({ entry, url: `http://127.0.0.1:${http}` });
      }

      const collectors: ChildCollector[] = [];
      for (const name of ['collector-c', 'collector-d']) {
        const [http, grpc] = [await port(), await port()];
        const collector = await spawnCollector(
          join(dir.dir, `${name}.db`),
          ['--port', String(http), '--grpc-port', String(grpc)],
          {},
          { startWithinMs: START_WITHIN_MS },
        );
        expect(collector.url).toBe(`http://127.0.0.1:${http}`);
        collectors.push(collector);
        started.push({ name, child: collector.child, output: '', ports: [http, grpc] });
      }

      for (const [index, name] of ['otelcol-e', 'otelcol-f'].entries()) {
        // Each in front of one of the two collectors.
        const extscope = collectors[index]!.url;
        const [grpc, http, telemetry] = [await port(), await port(), await port()];
        await start(
          name,
          otelcol,
          ['--config', `file:${join(ROOT, 'deploy/otelcol/extscope.yaml')}`],
          {
            PATH: process.env['PATH'] ?? '',
            OTELCOL_OTLP_GRPC_ENDPOINT: `127.0.0.1:${grpc}`,
            OTELCOL_OTLP_HTTP_ENDPOINT: `127.0.0.1:${http}`,
            OTELCOL_TELEMETRY_PORT: String(telemetry),
            OTELCOL_STORAGE_DIR: join(dir.dir, `${name}-storage`),
            EXTSCOPE_ENDPOINT: extscope,
            MAIN_BACKEND_ENDPOINT: extscope,
          },
          [grpc, http, telemetry],
          /Everything is ready/,
        );
        // Its own telemetry answers on the port it was given.
        expect((await fetch(`http://127.0.0.1:${telemetry}/metrics`)).status).toBe(200);
      }

      // Each listens on exactly the ports it was given: a demo also on its MCP servers' free ports, never a default one.
      const byRoot = listening(started.map((entry) => entry.child.pid!));
      for (const entry of started) {
        const own = byRoot.get(entry.child.pid!)!;
        expect(
          DEFAULT_PORTS.filter((defaultPort) => own.includes(defaultPort)),
          entry.name,
        ).toEqual([]);
        if (entry.name.startsWith('demo')) {
          for (const given of entry.ports) expect(own, entry.name).toContain(given);
          // The four MCP servers, each on a port of its own, beside the collector's two.
          expect(own.length, entry.name).toBe(entry.ports.length + 4);
        } else expect(own, entry.name).toEqual([...entry.ports].sort((a, b) => a - b));
      }

      // Each demo's fleet is counted by its own collector.
      for (const demo of demos) await expect.poll(() => requestsIn(demo.url), { timeout: 120_000, interval: 1000 }).toBeGreaterThan(0);

      // Every one stops cleanly: the demos on SIGINT (Ctrl-C), the collectors on SIGTERM.
      for (const entry of started) {
        const exited = once(entry.child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
        entry.child.kill(entry.name.startsWith('demo') ? 'SIGINT' : 'SIGTERM');
        const [code, signal] = await exited;
        expect({ name: entry.name, code, signal }).toEqual({ name: entry.name, code: 0, signal: null });
      }
    },
  );
});
