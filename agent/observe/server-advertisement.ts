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

/** Read once per `extensions` object: its extensions, and the last advertisement made of them. */
interface CachedExtensions {
  extensions: Extensions;
  last: ServerAdvertisement | undefined;
}

const sameIdentity = (a: ServerIdentity, b: ServerIdentity): boolean => a.name === b.name && a.version === b.version;

/**
 * Reads server advertisements, caching by the capabilities' `extensions` object: per-request factories usually
 * pass the same constant, so a fresh server per HTTP request costs one WeakMap lookup, not a re-hash, and gets
 * the same advertisement object as the last one of that name and version (the recorder sees repeats by identity).
 */
export class ServerAdvertisements {
  private readonly byExtensionsObject = new WeakMap<object, CachedExtensions>();

  constructor(private readonly limits: ExtensionMapLimits) {}

  read(server: ServerLike): ServerAdvertisement {
    const capabilities = server.getCapabilities?.();
    const identity = readIdentity(server);
    const map = asRecord(capabilities)?.['extensions'];
    if (typeof map === 'object' && map !== null) {
      let cached = this.byExtensionsObject.get(map);
      if (cached === undefined) {
        cached = { extensions: this.readExtensions(capabilities), last: undefined };
        this.byExtensionsObject.set(map, cached);
      }
      if (cached.last === undefined || !sameIdentity(cached.last.identity, identity)) cached.last = { identity, ...cached.extensions };
      return cached.last;
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
