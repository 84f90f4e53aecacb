// `npm run pack`: the two packages' tarballs, as a release publishes them, into release/ (built first by the npm
// script): install them anywhere with `npm install <path to the .tgz>`.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const destination = join(root, 'release');
mkdirSync(destination, { recursive: true });
// Scripts are off: the build ran just before, and `prepare` would run it again.
const output = execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--workspaces', '--include-workspace-root', '--pack-destination', destination], {
  cwd: root,
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
});
for (const packed of JSON.parse(output)) process.stdout.write(`${packed.name}: ${join(destination, packed.filename)}\n`);
