import {
  InstrumentationBase,
  type InstrumentationModuleDefinition,
  InstrumentationNodeModuleDefinition,
  InstrumentationNodeModuleFile,
  isWrapped,
} from '@opentelemetry/instrumentation';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Hook as RequireHook } from 'require-in-the-middle';
import type { MeterProvider, TracerProvider } from '@opentelemetry/api';
import { MAX_EXTENSION_ID_LENGTH, MAX_IDS_PER_REQUEST, type Transport } from '../contract/index.js';
import type { ConnectableClass, Connect, HandlerFactory, ServeStdio } from './internal-types.js';
import { flushAtExit, flushProviders } from './exit-flush.js';
import { EntryExchanges } from './observe/entry-exchange.js';
import { observingCreateMcpHandler } from './patches/mcp-handler.js';
import { observingServeStdio } from './patches/serve-stdio.js';
import { ServerConnections, instrumentServerObject, isObservingConnect, observingConnect } from './patches/server-connect.js';
import { WireFallback } from './wire/fallback.js';
import type { MetricSnapshot } from './record/recorder.js';
import { RequestPipeline } from './record/request-pipeline.js';
import type { ExtscopeInstrumentationConfig, ServerIdentity } from './types.js';
import { PACKAGE_NAME, PACKAGE_VERSION } from './version.js';

const V2_SERVER = '@modelcontextprotocol/server';
const V1_SDK = '@modelcontextprotocol/sdk';
/** The SDK majors this agent was verified against; other versions are reported by the self-check, never patched. */
const SUPPORTED_MAJOR = { [V2_SERVER]: 2, [V1_SDK]: 1 } as const;
type Sdk = keyof typeof SUPPORTED_MAJOR;
/** The semver range of a supported major, its prereleases included (as {@link isSupported} counts them). */
const supportedVersions = (sdk: Sdk): string[] => [`>=${SUPPORTED_MAJOR[sdk]}.0.0-0 <${SUPPORTED_MAJOR[sdk] + 1}.0.0-0`];
const isSupported = (sdk: Sdk, version: string | undefined): boolean => version !== undefined && Number.parseInt(version, 10) === SUPPORTED_MAJOR[sdk];

/** The files of v1 that define its server classes, by build. */
const V1_SERVER_FILES = { esm: 'dist/esm/server/index.js', cjs: 'dist/cjs/server/index' } as const;
const V1_MCP_FILES = { esm: 'dist/esm/server/mcp.js', cjs: 'dist/cjs/server/mcp' } as const;
const V2_STDIO_FILES = ['dist/stdio.mjs', 'dist/stdio.cjs'];

type Exports = Record<string, unknown>;

/** What got loaded and what got patched, for the zero-code entry's startup self-check. */
export interface PatchStatus {
  loaded: Map<string, string | undefined>;
  patched: Set<string>;
  unsupported: string[];
  /** Where the wire fallback saw MCP requests arrive, if it did. */
  mcpTraffic?: 'stdio' | 'http';
}

type ResolvedConfig = Required<
  Pick<ExtscopeInstrumentationConfig, 'spans' | 'maxIdsPerRequest' | 'maxIdLength' | 'cardinalityLimit' | 'maxStreams' | 'captureSettings'>
>;

/** The documented defaults of {@link ExtscopeInstrumentationConfig}. */
const DEFAULT_CONFIG: ResolvedConfig = {
  spans: true,
  maxIdsPerRequest: MAX_IDS_PER_REQUEST,
  maxIdLength: MAX_EXTENSION_ID_LENGTH,
  cardinalityLimit: 1000,
  maxStreams: 10_000,
  captureSettings: false,
};

function resolveConfig(config: ExtscopeInstrumentationConfig): ResolvedConfig {
  const resolved = { ...DEFAULT_CONFIG };
  for (const key of Object.keys(DEFAULT_CONFIG) as (keyof ResolvedConfig)[]) {
    const value = config[key];
    if (value !== undefined) (resolved as Record<string, unknown>)[key] = value;
  }
  return resolved;
}

function readPackageVersion(directory: string): string | undefined {
  try {
    const version = (JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as { version?: unknown }).version;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}

/** The agent's parts, built on first use (see the `declare` fields of the class for why lazily). */
interface Parts {
  pipeline: RequestPipeline;
  servers: ServerConnections;
  exchanges: EntryExchanges;
  wire: WireFallback;
}

/** The latest enabled instrumentation, for {@link instrumentServer} (a global symbol: any copy of extscope finds it). */
const ACTIVE = Symbol.for('extscope.instrumentation');
/** What {@link PatchStatus.patched} names a server attached by hand. */
const MANUAL_LABEL = 'instrumentServer()';

/**
 * OpenTelemetry instrumentation for MCP servers built on the official TypeScript SDK: v2
 * (`@modelcontextprotocol/server`) and the legacy v1 (`@modelcontextprotocol/sdk`), ESM and CJS builds alike.
 *
 * It patches `connect` on `Server` and `McpServer` (every loaded copy) to observe the transport the server is
 * given, and wraps the two entries of v2, `createMcpHandler` and `serveStdio`, to see the answers they give
 * before any server instance exists.
 */
export class ExtscopeInstrumentation extends InstrumentationBase<ExtscopeInstrumentationConfig> {
  // `declare`: the base constructor calls init() and _updateMetricInstruments() before subclass fields would
  // be initialised, so these are created lazily and must not be reset by a field initialiser.
  declare private _parts: Parts | undefined;
  declare private _status: PatchStatus | undefined;
  declare private _v1RequireHook: RequireHook | undefined;
  declare private _providers: { meterProvider?: MeterProvider; tracerProvider?: TracerProvider } | undefined;
  declare private _unhookExit: (() => void) | undefined;

  constructor(config: ExtscopeInstrumentationConfig = {}) {
    super(PACKAGE_NAME, PACKAGE_VERSION, config);
  }

  /** Remembered for the flush at exit (the globals otherwise). */
  override setMeterProvider(meterProvider: MeterProvider): void {
    super.setMeterProvider(meterProvider);
    this._providers = { ...this._providers, meterProvider };
  }

  override setTracerProvider(tracerProvider: TracerProvider): void {
    super.setTracerProvider(tracerProvider);
    this._providers = { ...this._providers, tracerProvider };
  }

  /** See `flushOnExit` in ExtscopeInstrumentationConfig: hooked at the first server, once. */
  private flushProvidersAtExit(): void {
    if (this.getConfig().flushOnExit === false || this._unhookExit !== undefined) return;
    this._unhookExit = flushAtExit(() => {
      this.markProcessEnding();
      return flushProviders(this._providers);
    });
  }

  /** What got loaded and patched so far. */
  get status(): PatchStatus {
    this._status ??= { loaded: new Map(), patched: new Set(), unsupported: [] };
    return this._status;
  }

  private get parts(): Parts {
    if (this._parts === undefined) {
      const config = resolveConfig(this.getConfig());
      const pipeline = new RequestPipeline({ ...config, limits: { maxIds: config.maxIdsPerRequest, maxIdLength: config.maxIdLength } }, () => this.tracer);
      const exchanges = new EntryExchanges();
      const onFirstServer = (server: ServerIdentity, transport: Transport | undefined): void => {
        this.flushProvidersAtExit();
        this.getConfig().onFirstServer?.(server, transport);
      };
      const servers = new ServerConnections(pipeline, exchanges, onFirstServer);
      let trafficSeen = false;
      const wire = new WireFallback({
        pipeline,
        advertisements: servers.advertisements,
        announce: (server) => servers.announce(server),
        identify: (identity) => servers.identify(identity),
        sdkObserved: () => this.status.patched.size > 0 || this.getConfig().wireFallback === 'watch',
        mcpSeen: (side) => {
          if (trafficSeen) return;
          trafficSeen = true;
          this.status.mcpTraffic = side;
          servers.transport ??= side;
          this.getConfig().onMcpTraffic?.(side);
        },
      });
      this._parts = { pipeline, exchanges, servers, wire };
    }
    return this._parts;
  }

  /** Counts one failure in `extscope.agent.errors` under `stage` (e.g. `export_metrics`). */
  countAgentError(stage: string): void {
    this.parts.pipeline.count(stage);
  }

  /** The process is ending: the export that follows is its last and says so (`extscope.process.ended`). */
  markProcessEnding(): void {
    this.parts.pipeline.markEnding();
  }

  /** Every metric's points as a collection would read them now, synchronously (for the final export at exit). */
  snapshotMetrics(): MetricSnapshot[] {
    return this.parts.pipeline.snapshot();
  }

  /** Requests recorded so far, by every path. */
  get recordedRequests(): number {
    return this.parts.pipeline.recorded;
  }

  /**
   * Observes one MCP server object that no hook could patch (a bundled or vendored SDK copy): an `McpServer`
   * or a `Server`, of any copy, recognised by its `connect()` and `getCapabilities()`. Call it before
   * `connect()` (a transport it is connected to already is observed from now on). Returns `false`, changing
   * nothing, when the object is not an MCP server.
   */
  instrumentServer(server: unknown): boolean {
    const attached = instrumentServerObject(server, this.parts.servers);
    if (attached) this.status.patched.add(MANUAL_LABEL);
    return attached;
  }

  protected override _updateMetricInstruments(): void {
    this.parts.pipeline.bind(this.meter);
  }

  protected init(): InstrumentationModuleDefinition[] {
    // Every version of each SDK is noted, for the self-check (which names an unsupported one)...
    const census = (sdk: Sdk, files: string[] = []) =>
      new InstrumentationNodeModuleDefinition(
        sdk,
        ['*'],
        (exports: Exports, version?: string) => this.noteLoaded(sdk, version, exports),
        undefined,
        files.map(
          (path) =>
            new InstrumentationNodeModuleFile(
              `${sdk}/${path}`,
              ['*'],
              (exports: Exports, version?: string) => this.noteLoaded(sdk, version, exports),
              () => {},
            ),
        ),
      );
    // ...and only the supported ranges are patched (prereleases of a supported major included).
    const supported = (
      sdk: Sdk,
      patch: ((exports: Exports) => void) | undefined,
      unpatch: ((exports: Exports) => void) | undefined,
      files: InstrumentationNodeModuleFile[],
    ) => {
      const definition: InstrumentationModuleDefinition = new InstrumentationNodeModuleDefinition(
        sdk,
        supportedVersions(sdk),
        patch && ((exports: Exports) => this.guarded(exports, patch)),
        unpatch,
        files,
      );
      definition.includePrerelease = true;
      return definition;
    };
    const file = (sdk: Sdk, path: string, patch: (exports: Exports) => void, unpatch: (exports: Exports) => void) =>
      new InstrumentationNodeModuleFile(`${sdk}/${path}`, supportedVersions(sdk), (exports: Exports) => this.guarded(exports, patch), unpatch);
    return [
      census(V2_SERVER),
      supported(
        V2_SERVER,
        (exports) => this.patchV2(exports),
        (exports) => this.unpatchV2(exports),
        V2_STDIO_FILES.map((path) =>
          file(
            V2_SERVER,
            path,
            (exports) => this.patchServeStdio(exports),
            (exports) => this.unwrapExport(exports, 'serveStdio'),
          ),
        ),
      ),
      // v1's root export names a file the package lacks, so its main module is never hooked: only files are.
      // ESM files here; the CJS ones are hooked in enable(), see there.
      census(V1_SDK, [V1_SERVER_FILES.esm, V1_MCP_FILES.esm]),
      supported(V1_SDK, undefined, undefined, [
        file(
          V1_SDK,
          V1_SERVER_FILES.esm,
          (exports) => this.patchServer(exports['Server'], `${V1_SDK} Server`),
          (exports) => this.unpatchConnect(exports['Server']),
        ),
        file(
          V1_SDK,
          V1_MCP_FILES.esm,
          (exports) => this.patchMcpServer(exports['McpServer'], `${V1_SDK} McpServer`),
          (exports) => this.unpatchConnect(exports['McpServer']),
        ),
      ]),
    ];
  }

  /**
   * `@modelcontextprotocol/sdk` 1.x declares a root export (`.` → `dist/cjs/index.js`) whose file is not in the
   * package, so require-in-the-middle cannot locate the package's main file and skips every file inside it.
   * Naming the CJS files themselves (extension-less, as require-in-the-middle spells sub-modules) matches them
   * without that lookup.
   */
  override enable(): void {
    super.enable();
    (globalThis as Record<symbol, unknown>)[ACTIVE] = this;
    const wireFallback = this.getConfig().wireFallback;
    if (wireFallback === true || wireFallback === 'watch') this.parts.wire.start();
    if (this._v1RequireHook !== undefined) return;
    const files: Record<string, (exports: Exports) => void> = {
      [`${V1_SDK}/${V1_SERVER_FILES.cjs}`]: (exports) => this.patchServer(exports['Server'], `${V1_SDK} Server`),
      [`${V1_SDK}/${V1_MCP_FILES.cjs}`]: (exports) => this.patchMcpServer(exports['McpServer'], `${V1_SDK} McpServer`),
    };
    this._v1RequireHook = new RequireHook(Object.keys(files), { internals: true }, (exports, name, basedir) => {
      const patch = files[name.replaceAll('\\', '/')];
      if (patch === undefined || basedir === undefined) return exports;
      const version = readPackageVersion(basedir);
      this.noteLoaded(V1_SDK, version, exports);
      if (isSupported(V1_SDK, version)) this.guarded(exports as Exports, patch);
      return exports;
    });
  }

  override disable(): void {
    super.disable();
    this._parts?.wire.stop();
    if ((globalThis as Record<symbol, unknown>)[ACTIVE] === this) delete (globalThis as Record<symbol, unknown>)[ACTIVE];
    this._v1RequireHook?.unhook();
    this._v1RequireHook = undefined;
    this._unhookExit?.();
    this._unhookExit = undefined;
  }

  private noteLoaded<T>(sdk: Sdk, version: string | undefined, exports: T): T {
    this.status.loaded.set(sdk, version);
    const label = `${sdk}@${version ?? 'unknown'}`;
    if (!isSupported(sdk, version) && !this.status.unsupported.includes(label)) this.status.unsupported.push(label);
    return exports;
  }

  /** Applies a patch; a failure is counted, and the module is returned unpatched rather than broken. */
  private guarded(exports: Exports, patch: (exports: Exports) => void): Exports {
    try {
      patch(exports);
    } catch (error) {
      this.parts.pipeline.fail('patch', error);
    }
    return exports;
  }

  private patchV2(exports: Exports): void {
    this.patchServer(exports['Server'], `${V2_SERVER} Server`);
    this.patchMcpServer(exports['McpServer'], `${V2_SERVER} McpServer`);
    if (typeof exports['createMcpHandler'] !== 'function') return;
    if (isWrapped(exports['createMcpHandler'])) this._unwrap(exports, 'createMcpHandler');
    const { pipeline, exchanges } = this.parts;
    this._wrap(exports, 'createMcpHandler', (original) => observingCreateMcpHandler(original as HandlerFactory, pipeline, exchanges) as never);
  }

  private unpatchV2(exports: Exports): void {
    this.unpatchConnect(exports['Server']);
    this.unpatchConnect(exports['McpServer']);
    this.unwrapExport(exports, 'createMcpHandler');
  }

  private patchServeStdio(exports: Exports): void {
    if (typeof exports['serveStdio'] !== 'function') return;
    if (isWrapped(exports['serveStdio'])) this._unwrap(exports, 'serveStdio');
    const { pipeline, exchanges } = this.parts;
    const transportClass = exports['StdioServerTransport'];
    this._wrap(exports, 'serveStdio', (original) => observingServeStdio(original as ServeStdio, transportClass, pipeline, exchanges) as never);
  }

  private patchServer(candidate: unknown, label: string): void {
    this.patchConnect(candidate, label, this.parts.servers.observeServer);
  }

  /** `McpServer.connect` delegates to `this.server.connect`; observing here also covers apps whose `Server`
   * class was loaded through a path no hook sees (v1's relative import). A transport is observed once. */
  private patchMcpServer(candidate: unknown, label: string): void {
    this.patchConnect(candidate, label, this.parts.servers.observeMcpServer);
  }

  private patchConnect(candidate: unknown, label: string, observe: (instance: unknown, transport: unknown) => void): void {
    if (typeof candidate !== 'function') return;
    const prototype = (candidate as ConnectableClass).prototype;
    if (typeof prototype?.connect !== 'function') return;
    // Already ours (another instance, or another copy of extscope): observed once is enough.
    if (!isObservingConnect(prototype.connect)) this._wrap(prototype, 'connect', (original) => observingConnect(original as Connect, observe) as never);
    this.status.patched.add(label);
  }

  private unpatchConnect(candidate: unknown): void {
    if (typeof candidate !== 'function') return;
    const prototype = (candidate as ConnectableClass).prototype;
    if (isObservingConnect(prototype?.connect)) this._unwrap(prototype, 'connect');
  }

  private unwrapExport(exports: Exports, name: string): void {
    if (isWrapped(exports[name])) this._unwrap(exports, name);
  }
}

/**
 * Observes one MCP server object with the active extscope instrumentation (the one `@extscope/agent/register`
 * started, or the latest `ExtscopeInstrumentation` enabled): for servers whose SDK copy no hook can patch,
 * such as one bundled into the application. Duck-typed: an `McpServer` or `Server` of any SDK copy. Call it
 * before `server.connect(transport)`. Returns `false` when no instrumentation is active or `server` is not
 * an MCP server object; it never throws.
 */
export function instrumentServer(server: unknown): boolean {
  try {
    const active = (globalThis as Record<symbol, unknown>)[ACTIVE] as { instrumentServer?: (server: unknown) => boolean } | undefined;
    return active?.instrumentServer?.(server) ?? false;
  } catch {
    return false;
  }
}
