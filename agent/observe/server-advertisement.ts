import type { ServerLike } from '../internal-types.js';
import type { ServerIdentity } from '../types.js';
import { type DeclaredExtensions, type ExtensionMapLimits, fingerprint, readDeclaredExtensions } from './extension-map.js';
import { asRecord, asString } from './untrusted.js';

/** What one MCP server object advertises, read once when it connects. */
export interface ServerAdvertisement {
  identity: ServerIdentity;
  extensions: DeclaredExtensions;
  ids: ReadonlySet<string>;
  /** Settings fingerprints, index-aligned with `extensions.ids`. */
  fingerprints: readonly string[];
}

type Extensions = Omit<ServerAdvertisement, 'identity'>;

function readIdentity(server: ServerLike): ServerIdentity {
  // Missing or odd values just leave the identity empty (see ServerLike for why `_serverInfo`).
  const info = asRecord(server._serverInfo);
  if (info === undefined) return {};
  const name = asString(info['name']);
  const version = asString(info['version']);
  return {
    ...(name !== undefined && { name }),
    ...(version !== undefined && { version }),
  };
}

/**
 * Reads server advertisements, caching by the capabilities' `extensions` object: per-request factories usually
 * pass the same constant, so a fresh server per HTTP request costs one WeakMap lookup, not a re-hash.
 */
export class ServerAdvertisements {
  private readonly byExtensionsObject = new WeakMap<object, Extensions>();

  constructor(private readonly limits: ExtensionMapLimits) {}

  read(server: ServerLike): ServerAdvertisement {
    const capabilities = server.getCapabilities?.();
    const identity = readIdentity(server);
    const map = asRecord(capabilities)?.['extensions'];
    if (typeof map === 'object' && map !== null) {
      let extensions = this.byExtensionsObject.get(map);
      if (extensions === undefined) {
        extensions = this.readExtensions(capabilities);
        this.byExtensionsObject.set(map, extensions);
      }
      return { identity, ...extensions };
    }
    return { identity, ...this.readExtensions(capabilities) };
  }

  private readExtensions(capabilities: unknown): Extensions {
    const extensions = readDeclaredExtensions(capabilities ?? {}, this.limits);
    return {
      extensions,
      ids: new Set(extensions.ids),
      fingerprints: extensions.settings.map((settings) => fingerprint(settings)),
    };
  }
}
