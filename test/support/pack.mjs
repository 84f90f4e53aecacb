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

/**
 * What may be in each tarball: the build and its run-time files (npm adds package.json, README.md and LICENSE), and
 * what must be: each package's entries and commands (and the collector's generated OTLP decoder, which is JavaScript
 * compiled along rather than TypeScript).
 */
export const CONTENTS = {
  agent: {
    allowed: [/^package\.json$/, /^README\.md$/, /^LICENSE$/, /^dist\/(agent|contract)\/.+\.(js|d\.ts)$/],
    required: [
      'README.md',
      'LICENSE',
      'dist/agent/index.js',
      'dist/agent/register/register.js',
      'dist/agent/wrap/wrap.js',
      'dist/agent/proxy/proxy.js',
      'dist/agent/run/run.js',
      'dist/agent/bin/extscope-agent.js',
      'dist/contract/index.js',
    ],
  },
  collector: {
    allowed: [
      /^package\.json$/,
      /^README\.md$/,
      /^LICENSE$/,
      /^dist\/(collector|contract|bin)\/.+\.(js|d\.ts|json)$/,
      /^dashboard\/dist\/(assets\/)?[^/]+$/,
      /^migrations\/[a-z]+\/\d{3}_[a-z0-9_]+\.sql$/,
    ],
    required: [
      'README.md',
      'LICENSE',
      'dist/collector/index.js',
      'dist/contract/index.js',
      'dist/bin/extscope.js',
      'dist/collector/otlp/generated/otlp-proto.js',
      'dashboard/dist/index.html',
      'migrations/sqlite/001_initial.sql',
    ],
  },
};

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

/**
 * `npm publish --dry-run` of `which`, as the release workflow runs it (after the build, so without scripts): resolves
 * with the package's name, version and the paths its tarball holds, and npm's stderr (its warnings).
 */
export async function publishDryRun(which) {
  const { stdout, stderr } = await run('npm', ['publish', '--dry-run', '--json', '--ignore-scripts', '--access', 'public'], {
    cwd: PACKAGE_DIRS[which],
    timeout: 120_000,
    env: cleanEnv(),
  });
  const published = Object.values(JSON.parse(stdout))[0];
  return { name: published.name, version: published.version, files: published.files.map((file) => file.path), stderr };
}
