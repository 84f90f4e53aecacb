/**
 * `npm pack` of the repository's two packages, as they are published: the agent (`agent/`, `@extscope/agent`) and
 * the collector (the repository root, `extscope`). Both need `npm run build` first; nothing is built here.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Where each package's package.json is. */
export const PACKAGE_DIRS = { agent: join(ROOT, 'agent'), collector: ROOT };

/**
 * The caller's environment without OTEL_, EXTSCOPE_ and npm_ variables (none of them may leak into npm or into a
 * packaged program), and with no browser download.
 */
export function cleanEnv() {
  const env = {};
  for (const [key, value] of Object.entries(process.env))
    if (value !== undefined && !key.startsWith('OTEL_') && !key.startsWith('EXTSCOPE_') && !key.startsWith('npm_')) env[key] = value;
  return { ...env, PUPPETEER_SKIP_DOWNLOAD: '1', PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' };
}

/** Packs `which` into `destination`; resolves with the tarball's path, its sha256, its name and the paths it holds. */
export async function pack(which, destination) {
  const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', destination], {
    cwd: PACKAGE_DIRS[which],
    timeout: 120_000,
    env: cleanEnv(),
  });
  const [packed] = JSON.parse(stdout);
  const tarball = join(destination, packed.filename);
  const hash = createHash('sha256')
    .update(await readFile(tarball))
    .digest('hex');
  return { tarball, hash, name: packed.name, filename: packed.filename, files: packed.files.map((file) => file.path) };
}
