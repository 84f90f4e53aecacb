#!/usr/bin/env node
/**
 * Installs the compatibility suite's apps as a user would: each in a folder of its own, with the agent
 * (`@extscope/agent`, never the collector) from its packed tarball (`npm pack` of agent/) and the third-party
 * packages at pinned versions from the registry; the agent's peer `@opentelemetry/api` comes the way npm installs
 * peers. Installs are cached outside the repository (`$EXTSCOPE_COMPAT_CACHE`, default `~/.cache/extscope/compat`),
 * one folder per app keyed by its pinned packages, its fixture files and the tarball's hash. A new key starts from
 * a copy of the newest finished install of the same app, so npm only adds what changed.
 *
 * Install scripts are not run (`--ignore-scripts`, as many teams install): none of these servers needs one to
 * answer over stdio, no browser may be downloaded here, and the agent has none.
 *
 *     node test/compat/install.mjs            # every app; prints { app: folder } as JSON
 *     node test/compat/install.mjs memory pdf # some of them
 *
 * Fails (exit 1, npm's output on stderr) when a package cannot be installed: the suite never skips.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { cleanEnv, pack } from '../support/pack.mjs';

const run = promisify(execFile);
const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

/** Every third-party package the suite runs, pinned. `fixtures` are copied in from test/compat/fixtures. */
export const APPS = {
  filesystem: { packages: { '@modelcontextprotocol/server-filesystem': '2026.8.31' } },
  memory: { packages: { '@modelcontextprotocol/server-memory': '2026.8.31' } },
  everything: { packages: { '@modelcontextprotocol/server-everything': '2026.8.31' } },
  context7: { packages: { '@upstash/context7-mcp': '4.1.1' } },
  'chrome-devtools': { packages: { 'chrome-devtools-mcp': '1.11.0' } },
  pdf: { packages: { '@modelcontextprotocol/server-pdf': '2.0.4' } },
  // Servers of our own making, set up as users set up theirs: the standard NodeSDK (CJS, and ESM with the loader
  // hook), a v1 server exiting on stdin EOF, a v2 server dying of an uncaught exception.
  'own-setups': {
    packages: {
      '@modelcontextprotocol/server': '2.4.0',
      '@modelcontextprotocol/sdk': '1.32.2',
      '@opentelemetry/api': '1.9.0',
      '@opentelemetry/sdk-node': '0.223.0',
      'import-in-the-middle': '3.6.0',
      zod: '4.6.7',
    },
    fixtures: ['node-sdk-server.cjs', 'node-sdk-otel.mjs', 'node-sdk-server.mjs', 'exit-on-eof.mjs', 'uncaught-exception.mjs'],
  },
};

export const CACHE = process.env.EXTSCOPE_COMPAT_CACHE ?? join(homedir(), '.cache', 'extscope', 'compat');

/** `npm pack` of the built agent into a temporary folder; its path and its sha256. */
export async function packTarball() {
  const dir = await mkdtemp(join(tmpdir(), 'extscope-compat-pack-'));
  const { tarball, hash } = await pack('agent', dir);
  return { tarball, hash, dir };
}

async function exists(path) {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

async function appKey(name, app, tarballHash) {
  const hash = createHash('sha256').update(JSON.stringify(app.packages)).update(tarballHash);
  for (const file of app.fixtures ?? []) hash.update(file).update(await readFile(join(FIXTURES, file)));
  return `${name}-${hash.digest('hex').slice(0, 16)}`;
}

/** The newest finished install of `name` (any key), to start a new key from. */
async function newestInstall(name) {
  const entries = await readdir(CACHE).catch(() => []);
  let newest;
  for (const entry of entries) {
    if (!entry.startsWith(`${name}-`) || entry.slice(name.length + 1).length !== 16) continue;
    const marker = join(CACHE, entry, '.installed');
    const info = await stat(marker).catch(() => undefined);
    if (info !== undefined && (newest === undefined || info.mtimeMs > newest.mtimeMs)) newest = { path: join(CACHE, entry), mtimeMs: info.mtimeMs };
  }
  return newest?.path;
}

/** Installs one app (or finds it installed); resolves with its folder. */
async function installApp(name, app, tarball, tarballHash) {
  const folder = join(CACHE, await appKey(name, app, tarballHash));
  if (await exists(join(folder, '.installed'))) return folder;
  // Built beside the final folder and renamed into place: a half-made install is never taken for a finished one.
  const building = await mkdtemp(join(CACHE, `.building-${name}-`));
  try {
    const seed = await newestInstall(name);
    if (seed !== undefined) await cp(join(seed, 'node_modules'), join(building, 'node_modules'), { recursive: true, verbatimSymlinks: true });
    await writeFile(join(building, 'package.json'), JSON.stringify({ name: `compat-${name}`, private: true }, null, 2));
    const specs = [tarball, ...Object.entries(app.packages).map(([pkg, version]) => `${pkg}@${version}`)];
    await run('npm', ['install', '--no-audit', '--no-fund', '--save-exact', '--ignore-scripts', ...specs], {
      cwd: building,
      timeout: 900_000,
      env: cleanEnv(),
      maxBuffer: 64 << 20,
    }).catch((error) => {
      throw new Error(`npm install in ${name} failed: ${error.stderr ?? error.message}`);
    });
    for (const file of app.fixtures ?? []) await cp(join(FIXTURES, file), join(building, file));
    await writeFile(join(building, '.installed'), `${new Date().toISOString()}\n`);
    try {
      await rename(building, folder);
    } catch (error) {
      // Another run finished the same key first: theirs is as good.
      if (!(await exists(join(folder, '.installed')))) throw error;
      await rm(building, { recursive: true, force: true });
    }
    return folder;
  } catch (error) {
    await rm(building, { recursive: true, force: true });
    throw error;
  }
}

/** Packs the agent and installs `names` (default: every app) in parallel; resolves with { name: folder }. */
export async function installCompatApps(names = Object.keys(APPS)) {
  await mkdir(CACHE, { recursive: true });
  const { tarball, hash, dir } = await packTarball();
  try {
    const folders = await Promise.all(
      names.map(async (name) => {
        const app = APPS[name];
        if (app === undefined) throw new Error(`no compat app named ${name}`);
        return [name, await installApp(name, app, tarball, hash)];
      }),
    );
    return Object.fromEntries(folders);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  installCompatApps(process.argv.length > 2 ? process.argv.slice(2) : undefined).then(
    (folders) => process.stdout.write(`${JSON.stringify(folders, null, 2)}\n`),
    (error) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
