/**
 * The compatibility suite: real MCP servers from npm, each installed in a folder of its own with the agent
 * (`@extscope/agent`, not the collector) from its packed tarball (test/compat/install.mjs, cached outside the
 * repository), run as a user runs them (`node --import @extscope/agent/register <the package's bin>`), driven over
 * stdio by real clients: a v2 client negotiating the version (`versionNegotiation: { mode: 'auto' }`), a v2 client
 * of the 2025 era, and a v1 client. Each session is counted exactly: every request the client sent, over every
 * server process it started (a failed version probe starts a second one), is in a real collector under the
 * session's own service name.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCollector, startCollector } from '../../collector/index.js';
import { agentEnv } from '../support/processes.js';
import { requestsOfService } from '../support/matrix.js';
import { APPS, installCompatApps } from './install.mjs';

type AppName = string;
type ClientKind = 'v2-auto' | 'v2-2025' | 'v1';
const CLIENTS: ClientKind[] = ['v2-auto', 'v2-2025', 'v1'];

interface ServerCase {
  app: AppName;
  pkg: string;
  args?: (dir: string) => string[];
  env?: (dir: string) => Record<string, string>;
}

/** A server of the `own-setups` app: its node arguments (in the app's folder) and what each session does. */
interface SetupCase {
  title: string;
  service: string;
  node: string[];
  /** After listing the tools, call `echo` once. */
  call?: boolean;
  /** The process ends by itself after the call (an uncaught exception): wait for it before closing. */
  dies?: boolean;
}

const SERVERS: ServerCase[] = [
  { app: 'filesystem', pkg: '@modelcontextprotocol/server-filesystem', args: (dir) => [dir] },
  { app: 'memory', pkg: '@modelcontextprotocol/server-memory', env: (dir) => ({ MEMORY_FILE_PATH: join(dir, 'memory.jsonl') }) },
  { app: 'everything', pkg: '@modelcontextprotocol/server-everything', args: () => ['stdio'] },
  { app: 'context7', pkg: '@upstash/context7-mcp' },
  { app: 'chrome-devtools', pkg: 'chrome-devtools-mcp' },
  { app: 'pdf', pkg: '@modelcontextprotocol/server-pdf', args: () => ['--stdio'] },
];

const SETUPS: SetupCase[] = [
  { title: 'a v2 server with the standard NodeSDK and ExtscopeInstrumentation, CommonJS', service: 'node-sdk-cjs', node: ['node-sdk-server.cjs'], call: true },
  {
    title: 'a v2 server with the standard NodeSDK and ExtscopeInstrumentation, ESM with the loader hook',
    service: 'node-sdk-esm',
    node: ['--import', './node-sdk-otel.mjs', 'node-sdk-server.mjs'],
    call: true,
  },
  {
    title: 'a v1 server that calls process.exit(0) on stdin EOF, with @extscope/agent/register',
    service: 'exit-on-eof',
    node: ['--import', '@extscope/agent/register', 'exit-on-eof.mjs'],
    call: true,
  },
  {
    title: 'a v2 server that dies of an uncaught exception after answering, with @extscope/agent/register',
    service: 'uncaught-exception',
    node: ['--import', '@extscope/agent/register', 'uncaught-exception.mjs'],
    call: true,
    dies: true,
  },
];

let folders: Record<string, string>;
let collector: RunningCollector;
let dir: string;
beforeAll(async () => {
  // Fails the suite (never skips it) when a package cannot be installed.
  folders = (await installCompatApps(Object.keys(APPS))) as Record<string, string>;
  dir = await mkdtemp(join(tmpdir(), 'extscope-compat-'));
  collector = await startCollector({ dbPath: join(dir, 'extscope.db'), port: 0 });
}, 1_500_000);
afterAll(async () => {
  await collector?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** The file a package's (first) bin names. */
async function binOf(folder: string, pkg: string): Promise<string> {
  const root = join(folder, 'node_modules', pkg);
  const { bin } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { bin: string | Record<string, string> };
  return join(root, typeof bin === 'string' ? bin : Object.values(bin)[0]!);
}

/** Every request the collector holds under `service`. */
const counted = (service: string): Promise<number> => requestsOfService(collector.url, service);

/** Counts the requests (messages with a method and an id) a transport sends. */
function countSent<T extends { send: (message: never, ...rest: never[]) => Promise<void> }>(transport: T, sent: { requests: number }): T {
  const send = transport.send.bind(transport) as (...args: unknown[]) => Promise<void>;
  transport.send = ((message: { method?: unknown; id?: unknown }, ...rest: unknown[]) => {
    if (typeof message.method === 'string' && message.id !== undefined) sent.requests++;
    return send(message, ...rest);
  }) as T['send'];
  return transport;
}

/**
 * A v2 stdio transport class that counts the requests it sends. In `auto` mode the client sends its version probe
 * on a sibling transport it builds from the same class (a short-lived second server process), so the count covers
 * every server process the session started. The SDK probes on a sibling only for a class whose own prototype has
 * `_dispose`, hence the forwarding method.
 */
function countingStdio(sent: { requests: number }): typeof StdioClientTransport {
  class CountingStdioClientTransport extends StdioClientTransport {
    override send(...args: Parameters<StdioClientTransport['send']>): Promise<void> {
      const [message] = args as unknown as [{ method?: unknown; id?: unknown }];
      if (typeof message.method === 'string' && message.id !== undefined) sent.requests++;
      return super.send(...args);
    }
  }
  const { _dispose } = StdioClientTransport.prototype as unknown as { _dispose: unknown };
  Object.defineProperty(CountingStdioClientTransport.prototype, '_dispose', { value: _dispose, writable: true, configurable: true });
  return CountingStdioClientTransport;
}

interface SessionOptions {
  /** After listing the tools, call `echo` once. */
  call?: boolean;
  /** The server ends by itself after the call: wait until its transport closes before closing the client. */
  dies?: boolean;
}

/** Resolves when `client.onclose` fires (the server process ended), or rejects after 10 s. */
function closed(client: { onclose?: () => void }): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the server did not end within 10 s')), 10_000);
    const previous = client.onclose;
    client.onclose = () => {
      clearTimeout(timer);
      previous?.();
      resolve();
    };
  });
}

/** One session: connect, list the tools (and call one), close. Resolves with the requests sent and the revision spoken. */
async function session(
  kind: ClientKind,
  command: string,
  args: string[],
  cwd: string,
  env: Record<string, string>,
  options: SessionOptions = {},
): Promise<{ requests: number; tools: number; version: string | undefined }> {
  const sent = { requests: 0 };
  const info = { name: `compat-${kind}`, version: '1.0.0' };
  const echo = { name: 'echo', arguments: { text: 'compat' } };
  if (kind === 'v1') {
    const client = new V1Client(info, { capabilities: {} });
    await client.connect(countSent(new V1StdioClientTransport({ command, args, cwd, env, stderr: 'pipe' }), sent));
    const { tools } = await client.listTools();
    const ended = options.dies === true ? closed(client) : undefined;
    if (options.call === true) expect(await client.callTool(echo)).toMatchObject({ content: [{ type: 'text', text: 'compat' }] });
    await ended;
    await client.close();
    return { requests: sent.requests, tools: tools.length, version: undefined };
  }
  const client = new Client(info, { capabilities: {}, ...(kind === 'v2-auto' && { versionNegotiation: { mode: 'auto' as const } }) });
  const Transport = countingStdio(sent);
  await client.connect(new Transport({ command, args, cwd, env, stderr: 'pipe' }));
  const { tools } = await client.listTools();
  const version = client.getNegotiatedProtocolVersion();
  const ended = options.dies === true ? closed(client) : undefined;
  if (options.call === true) expect(await client.callTool(echo)).toMatchObject({ content: [{ type: 'text', text: 'compat' }] });
  await ended;
  await client.close();
  return { requests: sent.requests, tools: tools.length, version };
}

/** Waits until the collector holds exactly `expected` (service → requests); records the results in `table`. */
async function expectCounted(expected: Record<string, number>, label: (service: string) => string): Promise<void> {
  const results: Record<string, number> = {};
  await expect
    .poll(
      async () => {
        for (const service of Object.keys(expected)) results[service] = await counted(service);
        return { ...results };
      },
      { timeout: 30_000, interval: 500 },
    )
    .toEqual(expected);
  for (const service of Object.keys(expected)) table.push(`${label(service)}: ${results[service]}/${expected[service]}`);
}

/** What each session counted, for the summary line (server × client: counted/expected). */
const table: string[] = [];
afterAll(() => {
  if (table.length > 0) process.stderr.write(`compat results:\n${table.join('\n')}\n`);
});

describe('the installs', () => {
  it('each app holds the agent from its tarball, its peer @opentelemetry/api, and not the collector', async () => {
    const agent = JSON.parse(await readFile(new URL('../../agent/package.json', import.meta.url), 'utf8')) as { name: string; version: string };
    for (const [app, folder] of Object.entries(folders)) {
      const installed = JSON.parse(await readFile(join(folder, 'node_modules', agent.name, 'package.json'), 'utf8')) as { version: string };
      expect(installed.version, app).toBe(agent.version);
      expect(existsSync(join(folder, 'node_modules', '@opentelemetry', 'api', 'package.json')), `${app}: @opentelemetry/api`).toBe(true);
      expect(existsSync(join(folder, 'node_modules', 'extscope')), `${app}: the collector package`).toBe(false);
    }
  });
});

describe('real servers from npm, with the agent installed from its packed tarball', () => {
  for (const server of SERVERS) {
    it(
      `${server.pkg} ${APPS[server.app]?.packages[server.pkg] ?? ''}: every request of each client, both eras and v1, is counted`,
      { timeout: 240_000 },
      async () => {
        const folder = folders[server.app]!;
        const bin = await binOf(folder, server.pkg);
        const work = await mkdtemp(join(tmpdir(), `extscope-compat-${server.app}-`));
        try {
          const expected: Record<string, number> = {};
          for (const kind of CLIENTS) {
            const service = `compat-${server.app}-${kind}`;
            // The default export interval (60 s): only the way out carries these short sessions' counts.
            const env = agentEnv(collector.url, {
              OTEL_SERVICE_NAME: service,
              OTEL_METRIC_EXPORT_INTERVAL: '60000',
              EXTSCOPE_SPANS: 'false',
              ...server.env?.(work),
            });
            const { requests, tools, version } = await session(
              kind,
              process.execPath,
              ['--import', '@extscope/agent/register', bin, ...(server.args?.(work) ?? [])],
              folder,
              env,
            );
            expect(tools, `${service}: tools listed`).toBeGreaterThan(0);
            if (kind === 'v2-2025') expect(version).toBe('2025-11-25');
            expected[service] = requests;
          }
          await expectCounted(expected, (service) => `${server.pkg} × ${service.slice(`compat-${server.app}-`.length)}`);
        } finally {
          await rm(work, { recursive: true, force: true });
        }
      },
    );
  }
});

describe('servers set up as users set up theirs, with the agent installed from its packed tarball', () => {
  for (const setup of SETUPS) {
    it(`${setup.title}: every request of each client, both eras and v1, is counted`, { timeout: 240_000 }, async () => {
      const folder = folders['own-setups']!;
      const expected: Record<string, number> = {};
      for (const kind of CLIENTS) {
        const service = `compat-${setup.service}-${kind}`;
        // The default export interval (60 s): only the way out carries these short sessions' counts.
        const env = agentEnv(collector.url, { OTEL_SERVICE_NAME: service, OTEL_METRIC_EXPORT_INTERVAL: '60000', EXTSCOPE_SPANS: 'false' });
        const { requests, tools } = await session(kind, process.execPath, setup.node, folder, env, setup);
        expect(tools, `${service}: tools listed`).toBe(1);
        expected[service] = requests;
      }
      await expectCounted(expected, (service) => `${setup.title.split(',')[0]} (${setup.service}) × ${service.slice(`compat-${setup.service}-`.length)}`);
    });
  }
});
