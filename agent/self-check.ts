import { createRequire } from 'node:module';
import type { PatchStatus } from './instrumentation.js';

const MCP_SERVER_PATH = /[\\/]node_modules[\\/](@modelcontextprotocol[\\/](?:server|sdk))[\\/]/;

/**
 * Says once, on stderr, when an MCP server SDK is in the process but extscope is not recording it: an SDK major
 * it does not support, or a copy its hooks never saw (loaded before `extscope/register`, or bundled).
 * Returns the message, or `undefined` when all is well.
 */
export function selfCheckMessage(status: PatchStatus, connectedServers: number): string | undefined {
  if (status.unsupported.length > 0) {
    return `extscope: ${status.unsupported.join(', ')} is loaded but not supported (supported: @modelcontextprotocol/server 2.x, @modelcontextprotocol/sdk 1.x); its requests are not recorded.`;
  }
  const cache = createRequire(import.meta.url).cache;
  const unseen = new Set<string>();
  for (const path of Object.keys(cache)) {
    const match = MCP_SERVER_PATH.exec(path);
    if (match?.[1] !== undefined) {
      const name = match[1].replace('\\', '/');
      if (!status.loaded.has(name) && /[\\/]server[\\/]|server[\\/]dist|index\.cjs$/.test(path)) unseen.add(name);
    }
  }
  if (unseen.size > 0) {
    return `extscope: ${[...unseen].join(', ')} was loaded where extscope's hooks could not see it (before extscope/register, or from a bundle); its requests are not recorded.`;
  }
  if (status.loaded.size > 0 && status.patched.size === 0 && connectedServers === 0) {
    return `extscope: ${[...status.loaded.keys()].join(', ')} is loaded but no Server class could be patched; nothing is recorded.`;
  }
  return undefined;
}
