/**
 * The agent package on its own, as a user installs it from its release tarball: a fresh folder holding nothing but
 * `npm install <extscope-agent tarball>` gets at most 30 packages, none with an install script or a native binary,
 * and `npx @extscope/agent wrap -- <Python server>` there counts a real client session exactly. From a folder
 * unrelated to any install, `npx -y --package <tarball> extscope-agent run -- npx -y <server from npm>` instruments a
 * Node.js server npx fetches into a cache of its own (where `--import @extscope/agent/register` cannot resolve),
 * counted exactly too. A collector built from this repository counts; the agent is the tarball's only.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningCollector } from '../../collector/index.js';
import { startTestCollector } from '../collector/helpers/collector.js';
import { matrixByClient, requestsOfService } from '../support/matrix.js';
import { cleanEnv, pack } from '../support/pack.mjs';
import { ROOT } from '../support/processes.js';

const run = promisify(execFile);
/** The reference "everything" server, pinned: what `npx -y` fetches from the registry. */
const EVERYTHING = '@modelcontextprotocol/server-everything@2026.8.31';
/** The most packages the agent alone may bring (it and its dependencies, @opentelemetry/api included). */
const MAX_PACKAGES = 30;
/** What only the collector needs, and a server project must never get from the agent. */
const COLLECTOR_ONLY = ['extscope', 'fastify', 'pg', 'better-sqlite3', '@grpc/grpc-js'];

let dir: string;
let tarball: string;
let timeVenv: string;
let collector: RunningCollector;
/** The fresh folder the agent tarball alone is installed into. */
let app: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'extscope-agent-alone-'));
  app = join(dir, 'app');
  await mkdir(app);
  // The pinned Python servers, built once into ~/.cache/extscope; fails loudly when a registry is unreachable.
  const installed = execFileSync('bash', [join(ROOT, 'scripts/install-other-sdks.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const time = /^time=(.+)$/m.exec(installed)?.[1];
  if (time === undefined) throw new Error(`install-other-sdks.sh printed no time= line: ${installed}`);
  timeVenv = time;
  tarball = (await pack('agent', dir)).tarball;
  collector = await startTestCollector(dir);
}, 600_000);

afterAll(async () => {
  await collector?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** Agent environment for a client-started server: the standard variables only, exporting quickly to the collector. */
function agentEnv(service: string, extra: Record<string, string> = {}): Record<string, string> {
  return { ...cleanEnv(), OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SERVICE_NAME: service, OTEL_METRIC_EXPORT_INTERVAL: '200', ...extra };
}

/** A real v1 client over stdio that counts the requests it sends. */
async function countingSession(
  transport: StdioClientTransport,
  clientName: string,
  session: (client: Client) => Promise<void>,
): Promise<{ sent: number; stderr: string }> {
  let sent = 0;
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const send = transport.send.bind(transport);
  transport.send = (message) => {
    if ('method' in message && 'id' in message) sent++;
    return send(message);
  };
  const client = new Client({ name: clientName, version: '1.0.0' }, { capabilities: {} });
  // npx may fetch packages before the server answers `initialize`: minutes on a cold cache and a busy machine.
  await client.connect(transport, { timeout: 300_000 });
  await session(client);
  await client.close();
  return { sent, stderr };
}

interface Installed {
  name: string;
  scripts?: Record<string, string>;
  gypfile?: boolean;
}

/** Every package under `node_modules` (scoped and nested ones too), read from its own package.json. */
async function installedPackages(nodeModules: string): Promise<Installed[]> {
  const found: Installed[] = [];
  const visit = async (folder: string): Promise<void> => {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const path = join(folder, entry.name);
      if (entry.name.startsWith('@')) {
        await visit(path);
        continue;
      }
      found.push(JSON.parse(await readFile(join(path, 'package.json'), 'utf8')) as Installed);
      if (existsSync(join(path, 'node_modules'))) await visit(join(path, 'node_modules'));
    }
  };
  await visit(nodeModules);
  return found;
}

/** Native code anywhere under `folder`: a compiled addon or a node-gyp build. */
async function nativeFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true });
  return entries.filter((path) => path.endsWith('.node') || path.endsWith('binding.gyp'));
}

describe('@extscope/agent alone, from its release tarball', () => {
  it(
    `installs into a fresh folder as at most ${MAX_PACKAGES} packages, none with an install script or native code, none of the collector's`,
    { timeout: 600_000 },
    async () => {
      await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
      const { stderr } = await run('npm', ['install', '--no-audit', '--no-fund', tarball], {
        cwd: app,
        env: cleanEnv(),
        timeout: 540_000,
        maxBuffer: 16 << 20,
      });
      expect(stderr).not.toMatch(/EBADENGINE|gyp|install script/i);
      const packages = await installedPackages(join(app, 'node_modules'));
      expect(packages.map((entry) => entry.name)).toContain('@extscope/agent');
      expect(packages.length).toBeLessThanOrEqual(MAX_PACKAGES);
      const scripted = packages.filter(
        (entry) => entry.gypfile === true || ['preinstall', 'install', 'postinstall'].some((hook) => entry.scripts?.[hook] !== undefined),
      );
      expect(scripted.map((entry) => entry.name)).toEqual([]);
      expect(await nativeFiles(join(app, 'node_modules'))).toEqual([]);
      expect(COLLECTOR_ONLY.filter((name) => packages.some((entry) => entry.name === name))).toEqual([]);
      // Its command is there, under the name npx runs for the package.
      expect(existsSync(join(app, 'node_modules', '.bin', 'extscope-agent'))).toBe(true);
    },
  );

  it('npx @extscope/agent wrap -- <venv>/bin/mcp-server-time counts a real client session exactly', { timeout: 300_000 }, async () => {
    expect(existsSync(join(app, 'node_modules', '@extscope', 'agent')), 'the agent installed by the test before').toBe(true);
    const transport = new StdioClientTransport({
      command: 'npx',
      args: ['--no-install', '@extscope/agent', 'wrap', '--', join(timeVenv, 'bin', 'mcp-server-time'), '--local-timezone', 'UTC'],
      cwd: app,
      env: agentEnv('time-wrapped', { EXTSCOPE_SPANS: 'false' }),
      stderr: 'pipe',
    });
    const { sent, stderr } = await countingSession(transport, 'time-client', async (client) => {
      const tools = (await client.listTools()).tools.map((tool) => tool.name);
      expect(tools).toContain('get_current_time');
      for (let call = 0; call < 4; call++) {
        const answer = await client.callTool({ name: 'get_current_time', arguments: { timezone: 'UTC' } });
        expect(answer.isError ?? false).toBe(false);
      }
    });
    // initialize, tools/list and four tools/call.
    expect(sent).toBe(6);
    await expect.poll(() => requestsOfService(collector.url, 'time-wrapped'), { timeout: 60_000, interval: 250 }).toBe(sent);
    expect((await matrixByClient(collector.url, 'time-wrapped')).get('time-client@1.0.0')?.requests).toBe(sent);
    expect(stderr).not.toMatch(/Traceback|cannot run/);
  });

  it(
    `npx -y --package <tarball> extscope-agent run -- npx -y ${EVERYTHING}, from an unrelated folder, counts every request exactly`,
    { timeout: 600_000 },
    async () => {
      const elsewhere = join(dir, 'elsewhere');
      await mkdir(elsewhere);
      // An npm cache of the test's own: both packages are fetched as a user's first run fetches them.
      const env = agentEnv('everything-npx', { npm_config_cache: join(dir, 'npm-cache'), npm_config_update_notifier: 'false' });
      const transport = new StdioClientTransport({
        command: 'npx',
        args: ['-y', '--package', tarball, 'extscope-agent', 'run', '--', 'npx', '-y', EVERYTHING, 'stdio'],
        cwd: elsewhere,
        env,
        stderr: 'pipe',
      });
      const { sent, stderr } = await countingSession(transport, 'everything-client', async (client) => {
        const tools = (await client.listTools()).tools.map((tool) => tool.name);
        expect(tools).toContain('echo');
        for (let call = 0; call < 3; call++)
          expect(await client.callTool({ name: 'echo', arguments: { message: `m${call}` } })).toMatchObject({ content: [{ type: 'text' }] });
      });
      expect(stderr).not.toContain('ERR_MODULE_NOT_FOUND');
      // initialize, tools/list and three tools/call.
      expect(sent).toBe(5);
      await expect.poll(() => requestsOfService(collector.url, 'everything-npx'), { timeout: 60_000, interval: 250 }).toBe(sent);
      expect((await matrixByClient(collector.url, 'everything-npx')).get('everything-client@1.0.0')?.requests).toBe(sent);
      // Nothing was installed into the folder it ran from.
      expect(await readdir(elsewhere)).toEqual([]);
    },
  );
});
