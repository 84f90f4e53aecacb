/**
 * The package as published: `npm pack` holds the built agent, collector, contract, CLI, dashboard and migrations
 * and nothing else; installed from the tarball into a folder of its own (dependencies from the registry), a
 * server there runs with `node --import @extscope/agent/register`, and `npx extscope collector` from that folder serves
 * the dashboard and counts the server's requests exactly.
 */
import { type ChildProcessWithoutNullStreams, execFile, spawn } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { processes } from '../support/proc-tree.js';
import { ROOT, fixture } from '../support/processes.js';

const run = promisify(execFile);
const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string; devDependencies: Record<string, string> };

/** What may be in the tarball: the build and its run-time files (npm adds package.json and README.md itself). */
const ALLOWED = [/^package\.json$/, /^README\.md$/, /^LICENSE$/, /^dist\/(agent|collector|contract|bin)\/.+\.(js|d\.ts|json)$/, /^dashboard\/dist\/(assets\/)?[^/]+$/, /^migrations\/[a-z]+\/\d{3}_[a-z0-9_]+\.sql$/];
const REQUIRED = ['dist/agent/index.js', 'dist/agent/register/register.js', 'dist/collector/index.js', 'dist/contract/index.js', 'dist/bin/extscope.js', 'dashboard/dist/index.html', 'migrations/sqlite/001_initial.sql'];

const children: ChildProcessWithoutNullStreams[] = [];
let dir: string | undefined;

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
function startChild(args: string[], cwd: string, env: Record<string, string>, match: (line: string) => string | undefined): Promise<{ child: ChildProcessWithoutNullStreams; found: string }> {
  const child = spawn(args[0]!, args.slice(1), { cwd, env: { ...cleanEnv(), ...env }, detached: true });
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
          resolve({ child, found });
          return;
        }
      }
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${output}`)));
  });
}

function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith('OTEL_') && !key.startsWith('EXTSCOPE_') && !key.startsWith('npm_')) env[key] = value;
  return env;
}

/** One stateless 2026-07-28 request, as any client sends it, with a client name the test can count. */
async function toolsCall(url: string, id: number): Promise<void> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name: 'echo',
        arguments: { text: 'packaged' },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'packaged-client', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
        },
      },
    }),
  });
  expect(response.status).toBe(200);
  expect(await response.text()).toContain('packaged');
}

describe('the published package', () => {
  it('npm pack holds the build, the dashboard and the migrations, and nothing else', { timeout: 120_000 }, async () => {
    dir = await mkdtemp(join(tmpdir(), 'extscope-pack-'));
    const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: ROOT, timeout: 120_000 });
    const [packed] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
    const paths = packed!.files.map((file) => file.path);
    expect(paths.filter((path) => !ALLOWED.some((pattern) => pattern.test(path)))).toEqual([]);
    for (const path of REQUIRED) expect(paths).toContain(path);
    expect(paths.some((path) => /test|\.map$|\.db$/.test(path))).toBe(false);
    expect(packed!.filename).toBe(`extscope-${pkg.version}.tgz`);
  });

  it('installed from the tarball in a folder of its own: node --import @extscope/agent/register and npx extscope collector', { timeout: 600_000 }, async () => {
    expect(dir, 'the tarball from the test before').toBeDefined();
    const tarball = join(dir!, `extscope-${pkg.version}.tgz`);
    const app = join(dir!, 'app');
    await run('mkdir', ['-p', app]);
    // A user's project: extscope from the tarball, the MCP SDK it instruments, and the native SQLite binding's build allowed.
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module', allowScripts: { 'better-sqlite3': true, extscope: false, protobufjs: false } }));
    await copyFile(fixture('packaged/server.mjs'), join(app, 'server.mjs'));
    // (zod comes with the SDK, which depends on it.)
    const deps = ['@modelcontextprotocol/server', '@modelcontextprotocol/node'].map((name) => `${name}@${pkg.devDependencies[name]!}`);
    await run('npm', ['install', '--no-audit', '--no-fund', '--no-save', tarball, ...deps], { cwd: app, timeout: 540_000, env: cleanEnv() });

    const { found: collectorUrl } = await startChild(['npx', '--no-install', 'extscope', 'collector', '--port', '0', '--db', './data/extscope.db'], app, {}, (line) => /listening on (http:\/\/[^\s"]+)/.exec(line)?.[1]);
    const page = await fetch(`${collectorUrl}/`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const script = /<script[^>]+src="([^"]+)"/.exec(html)?.[1];
    expect(script, html).toBeDefined();
    expect((await fetch(new URL(script!, collectorUrl))).status).toBe(200);

    const { found: port } = await startChild(
      [process.execPath, '--import', '@extscope/agent/register', 'server.mjs'],
      app,
      { OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl, OTEL_METRIC_EXPORT_INTERVAL: '200', OTEL_SERVICE_NAME: 'packaged' },
      (line) => (line.startsWith('{') ? String((JSON.parse(line) as { port: number }).port) : undefined),
    );
    const requests = 7;
    for (let id = 1; id <= requests; id++) await toolsCall(`http://127.0.0.1:${port}/mcp`, id);

    let counted = 0;
    for (let attempt = 0; attempt < 120 && counted < requests; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const matrix = (await (await fetch(`${collectorUrl}/api/v1/matrix?group=client_version`)).json()) as { rows: { client: string; requests: number; extensions: { id: string; negotiated: number }[] }[] };
      const row = matrix.rows.find((candidate) => candidate.client === 'packaged-client@1.0.0');
      counted = row?.requests ?? 0;
      if (counted === requests) expect(row!.extensions.find((extension) => extension.id === 'io.modelcontextprotocol/tasks')?.negotiated).toBe(requests);
    }
    expect(counted).toBe(requests);

    // Stopped, nothing of them is left running (npx's collector included).
    const groups = new Set(children.map((child) => child.pid!));
    await stopAll();
    expect(processes().filter((entry) => groups.has(entry.pgid) && entry.state !== 'Z').map((entry) => entry.pid)).toEqual([]);
  });
});
