import type { ServerLike } from '../internal-types.js';
import type { ServerIdentity } from '../types.js';
import {
  type DeclarationMemo,
  type DeclaredExtensions,
  type ExtensionMapLimits,
  UNKNOWN_DECLARATION,
  fingerprint,
  readDeclaredExtensions,
} from './extension-map.js';
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

const NO_IDS: ReadonlySet<string> = new Set();

/**
 * The server's name and version; `last` itself when they are the same (a fresh server per HTTP request names
 * itself the same way each time: nothing is allocated for it).
 */
function readIdentity(server: ServerLike, last: ServerIdentity | undefined): ServerIdentity {
  // Missing or odd values just leave the identity empty (see ServerLike for why `_serverInfo`).
  const info = asRecord(server._serverInfo);
  const name = asString(info?.['name']);
  const version = asString(info?.['version']);
  if (last !== undefined && last.name === name && last.version === version) return last;
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

/**
 * Reads server advertisements, caching by the capabilities' `extensions` object, and a fresh map that repeats the
 * last one read (the same valid ids in the same order, each with `{}` settings: see `DeclarationMemo`) shares that
 * one's entry. So a fresh server per HTTP request, whether its factory passes a constant or builds the
 * capabilities anew, costs a lookup rather than a re-hash, and gets the same advertisement object as the last one
 * of that name and version: the recorder then sees its requests repeat by identity.
 */
export class ServerAdvertisements {
  private readonly byExtensionsObject = new WeakMap<object, CachedExtensions>();
  /** Entries by declaration read: the memo hands back the same declaration for a map that repeats it. */
  private readonly byDeclaration = new WeakMap<DeclaredExtensions, CachedExtensions>();
  private readonly memo: DeclarationMemo = { last: undefined, settingsRead: true };
  /** The last server read as known by name only (see {@link identified}). */
  private lastIdentified: ServerAdvertisement | undefined;

  constructor(private readonly limits: ExtensionMapLimits) {}

  read(server: ServerLike): ServerAdvertisement {
    const capabilities = server.getCapabilities?.();
    const map = asRecord(capabilities)?.['extensions'];
    if (typeof map === 'object' && map !== null) {
      let cached = this.byExtensionsObject.get(map);
      if (cached === undefined) {
        const declared = readDeclaredExtensions(capabilities, this.limits, this.memo);
        cached = this.byDeclaration.get(declared);
        // A map that repeats the last one is found by its declaration every time: keyed by the object only
        // when new, so a factory that builds its map per request adds no entry per request.
        if (cached === undefined) {
          cached = { extensions: this.extensionsOf(declared), last: undefined };
          this.byDeclaration.set(declared, cached);
          this.byExtensionsObject.set(map, cached);
        }
      }
      const identity = readIdentity(server, cached.last?.identity);
      if (cached.last === undefined || cached.last.identity !== identity) cached.last = { identity, ...cached.extensions };
      return cached.last;
    }
    return { identity: readIdentity(server, undefined), ...this.extensionsOf(readDeclaredExtensions(capabilities ?? {}, this.limits)) };
  }

  /**
   * A server known by who it is (`serverInfo`: name and version), not by what it advertises; the same object as
   * the last one while the name and version repeat (every answer of one server names it alike: nothing is
   * allocated per answer).
   */
  identified(serverInfo: unknown): ServerAdvertisement {
    const last = this.lastIdentified;
    const identity = readIdentity({ _serverInfo: serverInfo }, last?.identity);
    if (last !== undefined && last.identity === identity) return last;
    this.lastIdentified = { identity, extensions: UNKNOWN_DECLARATION, ids: NO_IDS, fingerprints: [] };
    return this.lastIdentified;
  }

  private extensionsOf(extensions: DeclaredExtensions): Extensions {
    return {
      extensions,
      ids: new Set(extensions.ids),
      fingerprints: extensions.settings.map((settings) => fingerprint(settings)),
    };
  }
}
