/**
 * The two packages as published. `npm pack` of the agent (agent/, `@extscope/agent`) holds its build and nothing
 * else, and so does `npm pack` of the collector (the repository root, `extscope`). Installed from its tarball into
 * a server project of its own (with `@opentelemetry/api` and the v1 MCP SDK from the registry), the agent brings no
 * database, HTTP framework or gRPC package, and a server run there with `node --import @extscope/agent/register`
 * is counted exactly by the collector installed from its tarball into another folder and started with
 * `npx extscope collector`. Neither install warns about an engine on this Node.js.
 */
import { type ChildProcessWithoutNullStreams, execFile, spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRPC_EXPORTERS, GRPC_EXPORTER_VERSION } from '../../agent/register/exporters.js';
import { extensionCounts, matrixByClient, requestsOfService } from '../support/matrix.js';
import { CONTENTS, cleanEnv, pack } from '../support/pack.mjs';
import { processes } from '../support/proc-tree.js';
import { ROOT, fixture, rawStdioExchange, stderrBesidesRecoveredExports } from '../support/processes.js';

const run = promisify(execFile);
interface Manifest {
  name: string;
  version: string;
  devDependencies: Record<string, string>;
}
const collectorPkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as Manifest & { dependencies: Record<string, string> };
const agentPkg = JSON.parse(await readFile(join(ROOT, 'agent', 'package.json'), 'utf8')) as Manifest;

/** What a server project must not carry because of the agent: the collector's database, HTTP framework and gRPC. */
const NOT_IN_A_SERVER = ['extscope', 'fastify', 'pg', 'better-sqlite3', '@grpc/grpc-js', ...Object.values(GRPC_EXPORTERS)];

const children: ChildProcessWithoutNullStreams[] = [];
let dir: string;
const tarballs: { agent?: string; collector?: string } = {};
/** The server project (the agent, @opentelemetry/api, the v1 SDK) and the collector's folder. */
let server: string;
let ops: string;
/** The repository's own better-sqlite3 (the one its `npm install` compiled), and the folder its prebuilt goes in. */
const SQLITE = join(ROOT, 'node_modules', 'better-sqlite3');
let prebuilds: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'extscope-pack-'));
  server = join(dir, 'server');
  ops = join(dir, 'ops');
  prebuilds = join(dir, 'prebuilds');
  await mkdir(server);
  await mkdir(ops);
  await mkdir(prebuilds);
}, 60_000);

/**
 * better-sqlite3's install runs `prebuild-install || node-gyp rebuild`. No prebuilt binary can be downloaded here, so
 * the collector's install would compile SQLite from source: minutes of CPU that prove nothing about the package.
 * prebuild-install takes a binary from a local folder first (its `local-prebuilds` setting, read from a
 * `.prebuild-installrc` in a folder above the package; a file named as on the project's release page), so the
 * binding the repository's `npm install` already built (the same version, as `dependencies` pins it exactly, for
 * this Node.js ABI and platform) is handed over as that file. The tarball is still installed in a folder of its own,
 * with its install script run, and prebuild-install loads the binary before accepting it; the collector then keeps
 * its database in a SQLite file with it. (Were the name not to match, the install would compile, slowly but right.)
 */
async function offerBuiltSqlite(folder: string, version: string): Promise<void> {
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await run('tar', ['czf', join(prebuilds, name), '-C', SQLITE, 'build/Release/better_sqlite3.node']);
  await writeFile(join(folder, '.prebuild-installrc'), `local-prebuilds=${prebuilds}\n`);
}

function signalGroup(child: ChildProcessWithoutNullStreams, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // The group is gone.
  }
}

/** Each child runs in a process group of its own (npx starts the collector as a grandchild): stop the whole group. */
async function stopAll(): Promise<void> {
  for (const child of children.splice(0)) {
    const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', resolve));
    signalGroup(child, 'SIGTERM');
    const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    signalGroup(child, 'SIGKILL');
  }
}

afterAll(async () => {
  await stopAll();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** Starts a child in `cwd` and resolves with the first stdout line `match` accepts (bounded). */
function startChild<T>(args: string[], cwd: string, match: (line: string) => T | undefined): Promise<T> {
  const child = spawn(args[0]!, args.slice(1), { cwd, env: cleanEnv(), detached: true });
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args.join(' ')} printed nothing usable in 60 s: ${output}`)), 60_000);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      for (const line of output.split('\n')) {
        const found = match(line);
        if (found !== undefined) {
          clearTimeout(timer);
          resolve(found);
          return;
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${output}`)));
  });
}

/** `npm install` in `cwd`; resolves with npm's stderr (its warnings). */
async function npmInstall(cwd: string, specs: string[]): Promise<string> {
  const { stderr } = await run('npm', ['install', '--no-audit', '--no-fund', ...specs], { cwd, timeout: 540_000, env: cleanEnv(), maxBuffer: 16 << 20 });
  return stderr;
}

/** The names of every package installed under `folder` (nested ones included). */
async function installedNames(folder: string): Promise<string[]> {
  const { stdout } = await run('npm', ['ls', '--all', '--json'], { cwd: folder, env: cleanEnv(), maxBuffer: 16 << 20 });
  const names = new Set<string>();
  // An optional peer that is not installed is listed too, as an empty entry without a version.
  type Tree = Record<string, { version?: string; dependencies?: Tree }>;
  const walk = (deps: Tree | undefined): void => {
    for (const [name, node] of Object.entries(deps ?? {})) {
      if (node.version !== undefined) names.add(name);
      walk(node.dependencies);
    }
  };
  walk((JSON.parse(stdout) as { dependencies?: Tree }).dependencies);
  return [...names];
}

/** Agent environment for a child in the server project: exports to `endpoint`, quickly. */
function serverEnv(endpoint: string, extra: Record<string, string>): Record<string, string> {
  return { ...cleanEnv(), OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_METRIC_EXPORT_INTERVAL: '200', ...extra };
}

/** initialize, tools/list and one tools/call (3 requests) under `clientName`, in the 2025 era. */
function rawSession(clientName: string): object[] {
  return [
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: clientName, version: '1.0.0' } },
    },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'a' } } },
  ];
}

describe('npm pack', () => {
  it('of the agent holds its build (the contract compiled in), its README and licence, and nothing else', { timeout: 120_000 }, async () => {
    const packed = await pack('agent', dir);
    expect(packed.files.filter((path) => !CONTENTS.agent.allowed.some((pattern) => pattern.test(path)))).toEqual([]);
    for (const path of CONTENTS.agent.required) expect(packed.files).toContain(path);
    expect([packed.name, packed.filename]).toEqual([agentPkg.name, `extscope-agent-${agentPkg.version}.tgz`]);
    tarballs.agent = packed.tarball;
  });

  it('of the collector holds its build, the CLI, the dashboard and the migrations, and no agent code', { timeout: 120_000 }, async () => {
    const packed = await pack('collector', dir);
    expect(packed.files.filter((path) => !CONTENTS.collector.allowed.some((pattern) => pattern.test(path)))).toEqual([]);
    for (const path of CONTENTS.collector.required) expect(packed.files).toContain(path);
    expect(packed.files.some((path) => /test|\.map$|\.db$|^agent\/|^dist\/agent\//.test(path))).toBe(false);
    expect([packed.name, packed.filename]).toEqual([collectorPkg.name, `extscope-${collectorPkg.version}.tgz`]);
    tarballs.collector = packed.tarball;
  });
});

describe('installed from the tarballs, each in a folder of its own', () => {
  let collector: { url: string; grpc: string };

  // The two installs run at once (each in its own folder; npm's cache takes concurrent installs).
  it.concurrent(
    'the agent, into a server project with @opentelemetry/api and the v1 MCP SDK: no engine warning, no database, HTTP framework or gRPC package',
    { timeout: 600_000 },
    async ({ expect }) => {
      expect(tarballs.agent, 'the agent tarball from npm pack').toBeDefined();
      await writeFile(join(server, 'package.json'), JSON.stringify({ name: 'server', private: true, type: 'module' }));
      await copyFile(fixture('packaged/server.mjs'), join(server, 'server.mjs'));
      const warnings = await npmInstall(server, [
        tarballs.agent!,
        '@opentelemetry/api@1.9.0',
        `@modelcontextprotocol/sdk@${collectorPkg.devDependencies['@modelcontextprotocol/sdk']!}`,
        'zod@4.6.7',
      ]);
      expect(warnings).not.toContain('EBADENGINE');
      const names = await installedNames(server);
      expect(names).toContain(agentPkg.name);
      expect(NOT_IN_A_SERVER.filter((name) => names.includes(name))).toEqual([]);
    },
  );

  it.concurrent(
    'the collector, with the agent tarball it depends on: no engine warning, npx extscope --version, the gRPC exporters for wrap and proxy',
    { timeout: 600_000 },
    async ({ expect }) => {
      expect(tarballs.collector, 'the collector tarball from npm pack').toBeDefined();
      // The native SQLite binding's build allowed, as the collector's README says.
      await writeFile(join(ops, 'package.json'), JSON.stringify({ name: 'ops', private: true, allowScripts: { 'better-sqlite3': true } }));
      const { version } = JSON.parse(await readFile(join(SQLITE, 'package.json'), 'utf8')) as { version: string };
      expect(version, "the repository's better-sqlite3 is the version the collector pins").toBe(collectorPkg.dependencies['better-sqlite3']);
      await offerBuiltSqlite(ops, version);
      const warnings = await npmInstall(ops, [tarballs.collector!, tarballs.agent!]);
      expect(warnings).not.toContain('EBADENGINE');
      const { stdout } = await run('npx', ['--no-install', 'extscope', '--version'], { cwd: ops, env: cleanEnv() });
      expect(stdout).toBe(`extscope ${collectorPkg.version}\n`);
      // The binding installed here loads and keeps rows in a SQLite file.
      const sqlite = await run(
        process.execPath,
        [
          '-e',
          "const db = new (require('better-sqlite3'))('check.db'); db.exec('create table t (v)'); db.prepare('insert into t values (?)').run(42); console.log(db.prepare('select v from t').get().v)",
        ],
        { cwd: ops, env: cleanEnv() },
      );
      expect(sqlite.stdout).toBe('42\n');
      // `extscope wrap` and `proxy` run the agent installed here: its optional gRPC exporters come with the collector.
      const fromAgent = createRequire(join(ops, 'node_modules', agentPkg.name, 'dist', 'agent', 'register', 'exporters.js'));
      for (const name of Object.values(GRPC_EXPORTERS)) expect(() => fromAgent.resolve(name), name).not.toThrow();
    },
  );

  it(
    'npx extscope collector serves the dashboard and counts every request of a v1 server run with node --import @extscope/agent/register',
    { timeout: 240_000 },
    async () => {
      expect(existsSync(join(ops, 'node_modules', '.bin', 'extscope')), 'the collector installed by the test before').toBe(true);
      collector = await startChild(
        ['npx', '--no-install', 'extscope', 'collector', '--port', '0', '--grpc-port', '0', '--db', './data/extscope.db', '--log-format', 'json'],
        ops,
        (line) => {
          if (!line.startsWith('{')) return undefined;
          const entry = JSON.parse(line) as { url?: string; grpc?: string };
          return entry.url !== undefined && entry.grpc !== undefined ? { url: entry.url, grpc: entry.grpc } : undefined;
        },
      );
      const page = await fetch(`${collector.url}/`);
      expect(page.status).toBe(200);
      const script = /<script[^>]+src="([^"]+)"/.exec(await page.text())?.[1];
      expect(script).toBeDefined();
      expect((await fetch(new URL(script!, collector.url))).status).toBe(200);

      // A real v1 client over stdio, declaring the extension the server advertises; it counts what it sends.
      let sent = 0;
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: ['--import', '@extscope/agent/register', 'server.mjs'],
        cwd: server,
        env: serverEnv(collector.url, { OTEL_SERVICE_NAME: 'packaged', EXTSCOPE_SPANS: 'false' }),
        stderr: 'pipe',
      });
      const send = transport.send.bind(transport);
      transport.send = (message) => {
        if ('method' in message && 'id' in message) sent++;
        return send(message);
      };
      const client = new Client({ name: 'packaged-client', version: '1.0.0' }, { capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } });
      await client.connect(transport);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo']);
      for (let call = 0; call < 5; call++)
        expect(await client.callTool({ name: 'echo', arguments: { text: 'packaged' } })).toMatchObject({ content: [{ type: 'text', text: 'packaged' }] });
      await client.close();
      expect(sent).toBe(7);

      await expect.poll(() => requestsOfService(collector.url, 'packaged'), { timeout: 30_000, interval: 250 }).toBe(sent);
      const row = (await matrixByClient(collector.url, 'packaged')).get('packaged-client@1.0.0');
      expect(row?.requests).toBe(sent);
      expect(extensionCounts(row, 'io.modelcontextprotocol/tasks')).toEqual({ client: sent, server: sent, negotiated: sent });
    },
  );

  it(
    'OTEL_EXPORTER_OTLP_PROTOCOL=grpc without the optional exporters: one stderr line per signal, the same answers and exit code, nothing exported',
    { timeout: 120_000 },
    async () => {
      expect(collector, 'the collector from the test before').toBeDefined();
      const bare = await rawStdioExchange('server.mjs', rawSession('grpc-absent'), false, serverEnv(collector.url, {}), [], { cwd: server });
      expect(bare.code).toBe(0);
      const lines = (signal: 'METRICS' | 'TRACES', what: string): string =>
        `extscope: OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs ${GRPC_EXPORTERS[signal]}, which is not installed (npm install ${GRPC_EXPORTERS[signal]}@${GRPC_EXPORTER_VERSION}); ${what} are not exported`;
      for (const spans of [false, true]) {
        const service = `grpc-absent-${spans ? 'spans' : 'metrics'}`;
        const env = serverEnv(`http://${collector.grpc}`, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_SERVICE_NAME: service, EXTSCOPE_SPANS: String(spans) });
        const withAgent = await rawStdioExchange('server.mjs', rawSession('grpc-absent'), true, env, [], { cwd: server });
        expect(withAgent.stdout.equals(bare.stdout)).toBe(true);
        expect(withAgent.code).toBe(0);
        expect(withAgent.stderr.split('\n').filter((line) => line !== '')).toEqual(
          spans ? [lines('METRICS', 'metrics'), lines('TRACES', 'traces')] : [lines('METRICS', 'metrics')],
        );
        expect(await requestsOfService(collector.url, service)).toBe(0);
      }
    },
  );

  it('with the exporter the stderr line names installed, OTLP/gRPC to the collector counts every request', { timeout: 300_000 }, async () => {
    expect(collector, 'the collector from the tests before').toBeDefined();
    const warnings = await npmInstall(server, [`${GRPC_EXPORTERS.METRICS}@${GRPC_EXPORTER_VERSION}`]);
    expect(warnings).not.toContain('EBADENGINE');
    const bare = await rawStdioExchange('server.mjs', rawSession('grpc-installed'), false, serverEnv(collector.url, {}), [], { cwd: server });
    const env = serverEnv(`http://${collector.grpc}`, { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_SERVICE_NAME: 'grpc-installed', EXTSCOPE_SPANS: 'false' });
    const withAgent = await rawStdioExchange('server.mjs', rawSession('grpc-installed'), true, env, [], { cwd: server });
    expect(withAgent.stdout.equals(bare.stdout)).toBe(true);
    expect(stderrBesidesRecoveredExports(withAgent.stderr)).toBe('');
    expect(withAgent.code).toBe(0);
    await expect.poll(() => requestsOfService(collector.url, 'grpc-installed'), { timeout: 30_000, interval: 250 }).toBe(3);

    // Stopped, nothing of them is left running (npx's collector included).
    const groups = new Set(children.map((child) => child.pid!));
    await stopAll();
    // (A process killed a moment ago may still be tearing down its threads: it is gone within seconds.)
    await expect
      .poll(
        () =>
          processes()
            .filter((entry) => groups.has(entry.pgid) && entry.state !== 'Z')
            .map((entry) => `${entry.pid} ${entry.state}`),
        { timeout: 5_000, interval: 100 },
      )
      .toEqual([]);
  });
});
