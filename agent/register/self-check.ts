import { createRequire } from 'node:module';
import type { PatchStatus } from '../instrumentation.js';

/** CJS files that mean "an MCP *server* SDK is in this process" (a v1 client alone does not count). */
const SERVER_FILES: [name: string, pattern: RegExp][] = [
  ['@modelcontextprotocol/server', /[\\/]node_modules[\\/]@modelcontextprotocol[\\/]server[\\/]dist[\\/]/],
  ['@modelcontextprotocol/sdk', /[\\/]node_modules[\\/]@modelcontextprotocol[\\/]sdk[\\/]dist[\\/]cjs[\\/]server[\\/](?:index|mcp)\.js$/],
];

/**
 * The message the zero-code entry prints once on stderr when an MCP server SDK is in the process but extscope
 * is not recording it: an SDK major it does not support, or a copy its hooks never saw (loaded before
 * `@extscope/agent/register`, or bundled). `undefined` when all is well.
 */
export function selfCheckMessage(status: PatchStatus): string | undefined {
  if (status.unsupported.length > 0) {
    return `extscope: ${status.unsupported.join(', ')} is loaded but not supported (supported: @modelcontextprotocol/server 2.x, @modelcontextprotocol/sdk 1.x); its requests are not recorded.`;
  }
  const loadedFiles = Object.keys(createRequire(import.meta.url).cache);
  const unseen = SERVER_FILES.filter(([name, pattern]) => !status.loaded.has(name) && loadedFiles.some((file) => pattern.test(file)));
  if (unseen.length > 0) {
    return `extscope: ${unseen.map(([name]) => name).join(', ')} was loaded where extscope's hooks could not see it (before @extscope/agent/register?); its requests are not recorded.`;
  }
  if (status.loaded.size > 0 && status.patched.size === 0) {
    return `extscope: ${[...status.loaded.keys()].join(', ')} is loaded but no Server class could be patched; nothing is recorded.`;
  }
  return undefined;
}

/**
 * The message printed once when MCP requests arrived (on stdio or over HTTP) and, a while later, extscope
 * has recorded none: neither a patched SDK copy nor the wire fallback saw the server answer. `undefined`
 * when something was recorded.
 */
export function unrecordedTrafficMessage(side: 'stdio' | 'http', recorded: number, wireFallback: boolean): string | undefined {
  if (recorded > 0) return undefined;
  const where = side === 'stdio' ? 'on stdin' : 'over HTTP';
  const fallback = wireFallback ? '' : ' (the wire fallback is off: EXTSCOPE_WIRE_FALLBACK=false)';
  return `extscope: MCP requests arrive ${where} but none was recorded: no instrumented server answered them${fallback}. If the server bundles its own copy of the MCP SDK, call instrumentServer(server) from '@extscope/agent' before server.connect(); see docs/instrumenting.md.`;
}
