import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Launch, ServerMemory, launchKey, memoryDirectory } from '../../../agent/wire/server-memory.js';

const SERVER = { name: 'shop', version: '1.2.0' };
const CAPABILITIES = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

describe('what a wrapped server advertised, remembered for its next process', () => {
  let dir: string;
  let errors: unknown[];
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'extscope-memory-'));
    errors = [];
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const launch = (command: string[], env: Record<string, string> = { PATH: '/usr/bin' }): Launch => ({ command, env, cwd: dir });
  const memory = (command: string[] | Launch, now = Date.now, directory = join(dir, 'memory')) =>
    new ServerMemory(Array.isArray(command) ? launch(command) : command, (error) => errors.push(error), { now, directory });

  it('is read by the next process of the same command, for the server that names itself the same only', () => {
    memory(['python', 'server.py']).remember(SERVER, CAPABILITIES);
    const next = memory(['python', 'server.py']);
    expect(next.capabilitiesOf(SERVER)).toEqual(CAPABILITIES);
    expect(next.capabilitiesOf({ name: 'shop', version: '1.3.0' })).toBeUndefined();
    expect(next.capabilitiesOf({ name: 'other', version: '1.2.0' })).toBeUndefined();
    expect(memory(['python', 'other.py']).capabilitiesOf(SERVER)).toBeUndefined();
    expect(errors).toEqual([]);
  });

  it('is not used ten minutes after it was written', () => {
    let now = Date.now();
    memory(['srv'], () => now).remember(SERVER, CAPABILITIES);
    now += 10 * 60_000 + 1;
    expect(memory(['srv'], () => now).capabilitiesOf(SERVER)).toBeUndefined();
  });

  it('a corrupt file, or a link in place of the directory, is nothing remembered: counted, never thrown', async () => {
    memory(['srv']).remember(SERVER, CAPABILITIES);
    const { readdirSync } = await import('node:fs');
    const [file] = readdirSync(join(dir, 'memory'));
    await writeFile(join(dir, 'memory', file!), '{"savedAt": 1, "capabilities": ');
    expect(memory(['srv']).capabilitiesOf(SERVER)).toBeUndefined();
    expect(errors).toHaveLength(1);
    symlinkSync(join(dir, 'memory'), join(dir, 'linked'));
    const linked = memory(['srv'], Date.now, join(dir, 'linked'));
    linked.remember(SERVER, CAPABILITIES);
    expect(linked.capabilitiesOf(SERVER)).toBeUndefined();
  });

  it('is not used when it says it was saved in the future, beyond a few seconds of clock step', () => {
    const now = Date.now();
    memory(['srv'], () => now + 60_000).remember(SERVER, CAPABILITIES);
    expect(memory(['srv'], () => now).capabilitiesOf(SERVER)).toBeUndefined();
    memory(['srv'], () => now + 2_000).remember(SERVER, CAPABILITIES);
    expect(memory(['srv'], () => now).capabilitiesOf(SERVER)).toEqual(CAPABILITIES);
  });

  it('is another launch with another environment, but not with another terminal, shell level or login session', () => {
    const base = { PATH: '/usr/bin', API_MODE: 'full' };
    memory(launch(['srv'], base)).remember(SERVER, CAPABILITIES);
    expect(memory(launch(['srv'], { ...base, API_MODE: 'lite' })).capabilitiesOf(SERVER)).toBeUndefined();
    expect(memory(launch(['srv'], { ...base, EXTRA: '' })).capabilitiesOf(SERVER)).toBeUndefined();
    expect(memory(launch(['srv'], { PATH: '/usr/bin' })).capabilitiesOf(SERVER)).toBeUndefined();
    // The order variables come in, and the volatile ones, do not matter.
    expect(
      memory(launch(['srv'], { API_MODE: 'full', PATH: '/usr/bin', SHLVL: '3', _: '/usr/bin/env', TERM_SESSION_ID: 'x', INVOCATION_ID: 'y' })).capabilitiesOf(
        SERVER,
      ),
    ).toEqual(CAPABILITIES);
    expect(launchKey({ command: ['srv'], env: base, cwd: '/a' })).not.toBe(launchKey({ command: ['srv'], env: base, cwd: '/b' }));
  });

  it('is another launch once a file its command line names has changed', async () => {
    const config = join(dir, 'config.json');
    await writeFile(config, '{"extensions":["a"]}');
    const command = ['server', '--config', 'config.json'];
    memory(command).remember(SERVER, CAPABILITIES);
    expect(memory(command).capabilitiesOf(SERVER)).toEqual(CAPABILITIES);
    await writeFile(config, '{"extensions":["b"]}');
    await utimes(config, new Date(), new Date(Date.now() + 5_000));
    expect(memory(command).capabilitiesOf(SERVER)).toBeUndefined();
  });

  it('a directory open to other users is not used, and a link in place of the file is not followed: counted', async () => {
    const open = join(dir, 'open');
    await mkdir(open, { mode: 0o700 });
    await chmod(open, 0o777);
    const planted = memory(['srv'], Date.now, open);
    planted.remember(SERVER, CAPABILITIES);
    expect(planted.capabilitiesOf(SERVER)).toBeUndefined();
    expect(await readdir(open)).toEqual([]);
    expect(errors).toHaveLength(1);

    memory(['srv']).remember(SERVER, CAPABILITIES);
    const [file] = await readdir(join(dir, 'memory'));
    const elsewhere = join(dir, 'elsewhere.json');
    await writeFile(elsewhere, await readFile(join(dir, 'memory', file!)));
    await rm(join(dir, 'memory', file!));
    await symlink(elsewhere, join(dir, 'memory', file!));
    expect(memory(['srv']).capabilitiesOf(SERVER)).toBeUndefined();
    expect(errors).toHaveLength(2);
  });

  it("creates the cache directory's missing parents, the memory itself 0700", async () => {
    const nested = join(dir, 'home', '.cache', 'extscope', 'wrap-memory');
    memory(['srv'], Date.now, nested).remember(SERVER, CAPABILITIES);
    expect(memory(['srv'], Date.now, nested).capabilitiesOf(SERVER)).toEqual(CAPABILITIES);
    expect((await stat(nested)).mode & 0o777).toBe(0o700);
    expect(errors).toEqual([]);
  });

  it("lives under XDG_RUNTIME_DIR when it is this user's directory, else in the user's cache directory, else the system's temporary directory", async () => {
    const name = `extscope-wrap-${process.getuid!()}`;
    const others = join(dir, 'others');
    await mkdir(others);
    await chown(others, 65534, 65534);
    expect(memoryDirectory({ XDG_RUNTIME_DIR: dir, HOME: dir })).toBe(join(dir, name));
    expect(memoryDirectory({ XDG_RUNTIME_DIR: others, HOME: dir })).toBe(join(dir, '.cache', 'extscope', 'wrap-memory'));
    expect(memoryDirectory({ XDG_RUNTIME_DIR: join(dir, 'no-such-directory'), XDG_CACHE_HOME: dir, HOME: others })).toBe(join(dir, 'extscope', 'wrap-memory'));
    expect(memoryDirectory({ XDG_CACHE_HOME: 'relative', HOME: dir })).toBe(join(dir, '.cache', 'extscope', 'wrap-memory'));
    expect(memoryDirectory({ XDG_RUNTIME_DIR: 'relative', HOME: others })).toBe(join(tmpdir(), name));
    expect(memoryDirectory({})).toBe(join(tmpdir(), name));
  });
});
