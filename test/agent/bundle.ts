/**
 * Bundles a fixture server with esbuild, its MCP SDK copy inlined, as servers shipped for `npx` are: the bundle
 * loads no `@modelcontextprotocol/*` module, so only the wire (or `instrumentServer()`) can see it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { fixture } from '../support/processes.js';

export async function bundleFixture(name: string, outDir: string): Promise<string> {
  const outfile = join(outDir, name.replace(/\.mjs$/, '.bundle.mjs'));
  await build({
    entryPoints: [fixture(name)],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    logLevel: 'silent',
    // CommonJS dependencies inside an ESM bundle still call require() for Node's built-ins.
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
  });
  const text = await readFile(outfile, 'utf8');
  if (/@modelcontextprotocol\//.test(text.match(/^import .*$/gm)?.join('\n') ?? '')) throw new Error(`${name}: the bundle still imports the SDK`);
  return outfile;
}
