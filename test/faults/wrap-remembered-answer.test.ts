import { chmod, chown, mkdir, mkdtemp, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningCollector, startCollector } from '../../collector/index.js';
import { extensionCounts, matrixByClient, pollRequests } from '../support/matrix.js';
import { ROOT, agentEnv, fixture, rawStdioExchange, stderrBesidesRecoveredExports } from '../support/processes.js';

/**
 * `extscope wrap` remembers what a server answered to a 2026-07-28 client's `server/discover` probe, for the
 * client's next process of the same server (which is never asked again). Found by the reliability probe: the
 * answer was keyed on the command line, the working directory and two OTEL variables only, so the same command
 * started with another configuration was counted with the first one's extensions for ten minutes; an answer
 * saved "in the future" never expired; and the directory in the shared temporary directory could be created first
 * by another user (switching the memory off) or be left open to others (an answer planted there was believed).
 * Real wrappers (the built CLI), a real server whose extensions come from its configuration, a real collector.
 */

const EXTSCOPE = join(ROOT, 'dist/bin/extscope.js');
const WRAP = [EXTSCOPE, 'wrap', '--'];
const SERVER = fixture('configured-extensions-stdio.mjs');
const ALPHA = 'com.example/alpha';
const BETA = 'com.example/beta';
const PLANTED = 'com.example/planted';
/** Another user, as far as file ownership goes (`nobody`). */
const OTHER_UID = 65534;

let collector: RunningCollector;
let dir: string;
let cases = 0;
beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error("this test creates another user's directory (chown): run it as root, as CI does");
  dir = await mkdtemp(join(tmpdir(), 'extscope-wrap-memory-'));
  collector = await startCollector({ dbPath: join(dir, 'extscope.db'), port: 0 });
});
afterAll(async () => {
  await collector?.close();
  await rm(dir, { recursive: true, force: true });
});

/**
 * One test's world: its own temporary directory (TMPDIR) and service name; no XDG_RUNTIME_DIR, XDG_CACHE_HOME or
 * HOME unless given, so the memory lives in the temporary directory unless a test says otherwise.
 */
async function world(): Promise<{ service: string; tmp: string; env: (extra?: Record<string, string>) => Record<string, string> }> {
  cases++;
  const tmp = join(dir, `tmp-${cases}`);
  await mkdir(tmp, { mode: 0o700 });
  const service = `wrap-memory-${cases}`;
  return {
    service,
    tmp,
    env: (extra = {}) => {
      const env = agentEnv(collector.url, { OTEL_SERVICE_NAME: service, TMPDIR: tmp, ...extra });
      for (const name of ['XDG_RUNTIME_DIR', 'XDG_CACHE_HOME', 'HOME']) if (extra[name] === undefined) delete env[name];
      return env;
    },
  };
}

const envelope = (client: string) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: client, version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [ALPHA]: {}, [BETA]: {}, [PLANTED]: {} } },
});

/** The client's first process: it probes `server/discover`, and the wrapper writes the answer down. */
async function probe(client: string, env: Record<string, string>, args: string[] = []): Promise<void> {
  const result = await rawStdioExchange(
    SERVER,
    [{ jsonrpc: '2.0', id: 'probe', method: 'server/discover', params: { _meta: envelope(client) } }],
    false,
    env,
    args,
    { wrapper: WRAP },
  );
  expect(result.code).toBe(0);
  expect(result.stdout.toString('utf8')).toContain('"id":"probe"');
}

/** The client's session process: one call, no probe; the server names itself in the result, nothing more. */
async function session(client: string, env: Record<string, string>, args: string[] = []): Promise<string> {
  const result = await rawStdioExchange(
    SERVER,
    [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: client }, _meta: envelope(client) } }],
    false,
    env,
    args,
    { wrapper: WRAP },
  );
  expect(result.code).toBe(0);
  expect(result.stdout.toString('utf8')).toContain(`"text":"${client}"`);
  return result.stderr;
}

/** What the session `client`'s one request was counted with on the server's side, per extension. */
async function serverSide(service: string, client: string): Promise<Record<string, number>> {
  await pollRequests(collector.url, { [`${client}@1.0.0`]: 1 }, service);
  const row = (await matrixByClient(collector.url, service)).get(`${client}@1.0.0`);
  return Object.fromEntries([ALPHA, BETA, PLANTED].map((id) => [id, extensionCounts(row, id)?.server ?? 0]));
}

const extensions = (...ids: string[]) => JSON.stringify(Object.fromEntries(ids.map((id) => [id, {}])));

describe("wrap's remembered discover answer: one launch configuration, fresh, and this user's own", () => {
  it('a process started with another environment does not borrow the answer of the first', async () => {
    const { service, env } = await world();
    await probe('env-probe', env({ FIXTURE_EXTENSIONS: extensions(ALPHA) }));
    // The same command line, directory and OTEL variables; the server reads another extension set from its env.
    await session('env-other', env({ FIXTURE_EXTENSIONS: extensions(BETA) }));
    expect(await serverSide(service, 'env-other')).toEqual({ [ALPHA]: 0, [BETA]: 0, [PLANTED]: 0 });
    // The same configuration still meets its probe, whatever the shell or terminal says of itself.
    await session('env-same', env({ FIXTURE_EXTENSIONS: extensions(ALPHA), SHLVL: '7', _: '/usr/bin/env', OLDPWD: '/' }));
    expect(await serverSide(service, 'env-same')).toEqual({ [ALPHA]: 1, [BETA]: 0, [PLANTED]: 0 });
  });

  it('a configuration file named on the command line and edited since the probe is another configuration', async () => {
    const { service, tmp, env } = await world();
    const config = join(tmp, 'extensions.json');
    await writeFile(config, extensions(ALPHA));
    const args = ['--extensions', config];
    await probe('file-probe', env(), args);
    await session('file-same', env(), args);
    expect(await serverSide(service, 'file-same')).toEqual({ [ALPHA]: 1, [BETA]: 0, [PLANTED]: 0 });
    await writeFile(config, extensions(BETA));
    const later = new Date(Date.now() + 10_000);
    await utimes(config, later, later);
    await session('file-edited', env(), args);
    expect(await serverSide(service, 'file-edited')).toEqual({ [ALPHA]: 0, [BETA]: 0, [PLANTED]: 0 });
  });

  it('an answer that says it was saved an hour from now is expired, not kept for ever', async () => {
    const { service, tmp, env } = await world();
    const config = env({ FIXTURE_EXTENSIONS: extensions(ALPHA) });
    await probe('future-probe', config);
    await session('future-fresh', config);
    expect(await serverSide(service, 'future-fresh')).toEqual({ [ALPHA]: 1, [BETA]: 0, [PLANTED]: 0 });
    const memory = join(tmp, `extscope-wrap-${process.getuid!()}`);
    const files = (await readdir(memory)).filter((name) => name.endsWith('.json'));
    expect(files).toHaveLength(1);
    const saved = JSON.parse(await readFile(join(memory, files[0]!), 'utf8')) as { savedAt: number };
    await writeFile(join(memory, files[0]!), JSON.stringify({ ...saved, savedAt: Date.now() + 3_600_000 }));
    await session('future-saved', config);
    expect(await serverSide(service, 'future-saved')).toEqual({ [ALPHA]: 0, [BETA]: 0, [PLANTED]: 0 });
  });

  it("another user's directory created first in the temporary directory does not switch it off where XDG_RUNTIME_DIR is set", async () => {
    const { service, tmp, env } = await world();
    const squatted = join(tmp, `extscope-wrap-${process.getuid!()}`);
    await mkdir(squatted);
    await chmod(squatted, 0o777);
    await chown(squatted, OTHER_UID, OTHER_UID);
    const runtime = join(tmp, 'runtime');
    await mkdir(runtime, { mode: 0o700 });
    const config = env({ FIXTURE_EXTENSIONS: extensions(ALPHA), XDG_RUNTIME_DIR: runtime });
    await probe('runtime-probe', config);
    await session('runtime-session', config);
    expect(await serverSide(service, 'runtime-session')).toEqual({ [ALPHA]: 1, [BETA]: 0, [PLANTED]: 0 });
    expect(await readdir(squatted)).toEqual([]);
    expect((await stat(join(runtime, `extscope-wrap-${process.getuid!()}`))).mode & 0o777).toBe(0o700);
  });

  it("without XDG_RUNTIME_DIR, another user's directory created first in the temporary directory does not switch it off: the memory is in the home's cache", async () => {
    const { service, tmp, env } = await world();
    const squatted = join(tmp, `extscope-wrap-${process.getuid!()}`);
    await mkdir(squatted);
    await chmod(squatted, 0o777);
    await chown(squatted, OTHER_UID, OTHER_UID);
    const home = join(tmp, 'home');
    await mkdir(home, { mode: 0o700 });
    const config = env({ FIXTURE_EXTENSIONS: extensions(ALPHA), HOME: home });
    await probe('home-probe', config);
    await session('home-session', config);
    expect(await serverSide(service, 'home-session')).toEqual({ [ALPHA]: 1, [BETA]: 0, [PLANTED]: 0 });
    expect(await readdir(squatted)).toEqual([]);
    expect((await stat(join(home, '.cache', 'extscope', 'wrap-memory'))).mode & 0o777).toBe(0o700);
  });

  it("without XDG_RUNTIME_DIR or a home, another user's directory is never used, and the server and its stderr are untouched", async () => {
    const { service, tmp, env } = await world();
    const squatted = join(tmp, `extscope-wrap-${process.getuid!()}`);
    await mkdir(squatted);
    await chmod(squatted, 0o777);
    await chown(squatted, OTHER_UID, OTHER_UID);
    const config = env({ FIXTURE_EXTENSIONS: extensions(ALPHA) });
    await probe('squat-probe', config);
    const stderr = await session('squat-session', config);
    expect(await serverSide(service, 'squat-session')).toEqual({ [ALPHA]: 0, [BETA]: 0, [PLANTED]: 0 });
    expect(await readdir(squatted)).toEqual([]);
    expect(stderrBesidesRecoveredExports(stderr)).toBe('');
  });

  it('an answer planted in a directory of ours left open to other users is not believed', async () => {
    const { service, tmp, env } = await world();
    const config = env({ FIXTURE_EXTENSIONS: extensions(ALPHA) });
    await probe('open-probe', config);
    const memory = join(tmp, `extscope-wrap-${process.getuid!()}`);
    await chmod(memory, 0o777);
    const files = (await readdir(memory)).filter((name) => name.endsWith('.json'));
    expect(files).toHaveLength(1);
    // Another user writes their own answer in place of ours: same name and version, their extension.
    const planted = join(memory, files[0]!);
    await rm(planted);
    await writeFile(
      planted,
      JSON.stringify({ name: 'configured-extensions', version: '1.0.0', capabilities: { extensions: { [PLANTED]: {} } }, savedAt: Date.now() }),
    );
    await chown(planted, OTHER_UID, OTHER_UID);
    await session('open-session', config);
    expect(await serverSide(service, 'open-session')).toEqual({ [ALPHA]: 0, [BETA]: 0, [PLANTED]: 0 });
  });
});
