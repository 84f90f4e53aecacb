import { type DeclaredExtensions, type ExtensionMapLimits, fingerprint, readDeclaredExtensions } from './extension-map.js';
import type { ServerIdentity } from '../types.js';

/** What one MCP server object advertises, read once when it connects. */
export interface ServerView {
  identity: ServerIdentity;
  extensions: DeclaredExtensions;
  ids: ReadonlySet<string>;
  /** Settings fingerprints, index-aligned with `extensions.ids`. */
  fingerprints: readonly string[];
}

/** The structural surface of `Server` (v1 and v2) that extscope reads; all of it public except `_serverInfo`. */
export interface ServerLike {
  getCapabilities?: () => unknown;
  _serverInfo?: unknown;
}

function readIdentity(server: ServerLike): ServerIdentity {
  // `_serverInfo` is the only non-public read: both SDK majors keep the constructor's serverInfo there, and no
  // public getter exists. Missing or odd values just leave the identity empty.
  const info = server._serverInfo;
  if (typeof info !== 'object' || info === null) return {};
  const { name, version } = info as Record<string, unknown>;
  return {
    ...(typeof name === 'string' && { name }),
    ...(typeof version === 'string' && { version }),
  };
}

/**
 * Builds server views, caching by the capabilities' `extensions` object: per-request factories usually pass
 * the same constant, so a fresh server per HTTP request costs one WeakMap lookup, not a re-hash.
 */
export class ServerViews {
  private readonly byExtensionsObject = new WeakMap<object, Omit<ServerView, 'identity'>>();

  constructor(private readonly limits: ExtensionMapLimits) {}

  read(server: ServerLike): ServerView {
    const capabilities = server.getCapabilities?.();
    const identity = readIdentity(server);
    const map = typeof capabilities === 'object' && capabilities !== null
      ? (capabilities as Record<string, unknown>)['extensions']
      : undefined;
    if (typeof map === 'object' && map !== null) {
      const cached = this.byExtensionsObject.get(map);
      if (cached !== undefined) return { identity, ...cached };
      const built = this.build(capabilities);
      this.byExtensionsObject.set(map, built);
      return { identity, ...built };
    }
    return { identity, ...this.build(capabilities) };
  }

  private build(capabilities: unknown): Omit<ServerView, 'identity'> {
    const extensions = readDeclaredExtensions(capabilities ?? {}, this.limits);
    return {
      extensions,
      ids: new Set(extensions.ids),
      fingerprints: extensions.settings.map((settings) => fingerprint(settings)),
    };
  }
}
