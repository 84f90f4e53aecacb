// Builds the dashboard (dashboard/src) into dashboard/dist: hashed, minified assets and an index.html naming
// them. Run by `npm run build` (and so by `npm install`, through `prepare`). Prints the bundle sizes.
// EXTSCOPE_NO_MINIFY=1 keeps the output readable (for profiling); EXTSCOPE_BUILD_QUIET=1 prints nothing.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', 'dashboard');
const out = join(root, 'dist');
rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'assets'), { recursive: true });

const result = await build({
  entryPoints: { app: join(root, 'src', 'main.ts'), style: join(root, 'src', 'styles.css') },
  outdir: join(out, 'assets'),
  entryNames: '[name]-[hash]',
  chunkNames: '[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  target: ['chrome110', 'firefox110', 'safari16'],
  minify: process.env.EXTSCOPE_NO_MINIFY !== '1',
  sourcemap: false,
  legalComments: 'eof',
  metafile: true,
  logLevel: 'warning',
});

const outputs = Object.entries(result.metafile.outputs);
const entry = (name) => {
  const found = outputs.find(([, meta]) => meta.entryPoint !== undefined && meta.entryPoint.endsWith(name));
  if (found === undefined) throw new Error(`build: no output for ${name}`);
  return basename(found[0]);
};
const html = readFileSync(join(root, 'src', 'index.html'), 'utf8')
  .replace('%JS%', entry('main.ts'))
  .replace('%CSS%', entry('styles.css'));
writeFileSync(join(out, 'index.html'), html);

let total = 0;
let gzipped = 0;
const lines = outputs.map(([path, meta]) => {
  const zipped = gzipSync(readFileSync(path)).length;
  total += meta.bytes;
  gzipped += zipped;
  return `  ${basename(path).padEnd(28)} ${(meta.bytes / 1024).toFixed(1).padStart(7)} KiB  (${(zipped / 1024).toFixed(1)} KiB gzip)`;
});
writeFileSync(
  join(out, 'sizes.json'),
  `${JSON.stringify({ bytes: total, gzipBytes: gzipped, files: Object.fromEntries(outputs.map(([path, meta]) => [basename(path), meta.bytes])) }, null, 2)}\n`,
);
if (process.env.EXTSCOPE_BUILD_QUIET !== '1')
  console.log(`dashboard/dist:\n${lines.join('\n')}\n  total ${(total / 1024).toFixed(1)} KiB (${(gzipped / 1024).toFixed(1)} KiB gzip)`);
