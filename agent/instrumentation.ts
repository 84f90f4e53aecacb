import {
  InstrumentationBase,
  InstrumentationNodeModuleDefinition,
  InstrumentationNodeModuleFile,
} from '@opentelemetry/instrumentation';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Hook as RequireHook } from 'require-in-the-middle';
import { AgentCore } from './record/request-pipeline.js';
import { wrapMcpHandlerFactory } from './patches/mcp-handler.js';
import { wrapServeStdio } from './patches/serve-stdio.js';
import { DEFAULT_CONFIG, type ExtscopeInstrumentationConfig, type ResolvedConfig } from './types.js';
import { PACKAGE_NAME, PACKAGE_VERSION } from './version.js';

/** Marks a prototype method as ours, so a second instrumentation instance (or a second copy) never doubles it. */
const PATCHED = Symbol.for('extscope.patched');

const V2_SERVER = '@modelcontextprotocol/server';
const V1_SDK = '@modelcontextprotocol/sdk';
const SUPPORTED_MAJOR: Record<string, number> = { [V2_SERVER]: 2, [V1_SDK]: 1 };

type Connect = (this: unknown, transport: unknown, ...rest: unknown[]) => unknown;
interface ServerClass {
  prototype: { connect?: Connect };
}
interface McpServerInstance {
  server?: object;
}

/** What got loaded and what got patched, for the zero-code entry's startup self-check. */
export interface PatchStatus {
  loaded: Map<string, string | undefined>;
  patched: Set<string>;
  unsupported: string[];
}

function readPackageVersion(directory: string): string | undefined {
  try {
    const version = (JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as { version?: unknown }).version;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}

function resolveConfig(config: ExtscopeInstrumentationConfig): ResolvedConfig {
  const resolved = { ...DEFAULT_CONFIG };
  for (const key of Object.keys(DEFAULT_CONFIG) as (keyof ResolvedConfig)[]) {
    const value = config[key];
    if (value !== undefined) (resolved as Record<string, unknown>)[key] = value;
  }
  return resolved;
}

/**
 * OpenTelemetry instrumentation for MCP servers built on the official TypeScript SDK: v2
 * (`@modelcontextprotocol/server`) and the legacy v1 (`@modelcontextprotocol/sdk`), ESM and CJS builds alike.
 *
 * It patches `connect` on `Server` and `McpServer` (every loaded copy) to observe the transport the server is
 * given, and wraps `createMcpHandler` to see the answers its HTTP entry gives before any server exists.
 */
export class ExtscopeInstrumentation extends InstrumentationBase<ExtscopeInstrumentationConfig> {
  // `declare`: the base constructor calls init() and _updateMetricInstruments() before subclass fields would
  // be initialised, so these are created lazily and must not be reset by a field initialiser.
  declare private _core: AgentCore | undefined;
  declare private _status: PatchStatus | undefined;
  declare private _v1RequireHook: RequireHook | undefined;

  constructor(config: ExtscopeInstrumentationConfig = {}) {
    super(PACKAGE_NAME, PACKAGE_VERSION, config);
  }

  get core(): AgentCore {
    this._core ??= new AgentCore(resolveConfig(this.getConfig()), () => this.tracer, this.getConfig().onFirstServer);
    return this._core;
  }

  get status(): PatchStatus {
    this._status ??= { loaded: new Map(), patched: new Set(), unsupported: [] };
    return this._status;
  }

  protected override _updateMetricInstruments(): void {
    this.core.recorder.bind(this.meter);
  }

  private patchV1Server(exports: Record<string, unknown>, version?: string): Record<string, unknown> {
    return this.whenSupported(V1_SDK, version, exports, () => this.patchServer(exports['Server'], `${V1_SDK} Server`));
  }

  private patchV1McpServer(exports: Record<string, unknown>, version?: string): Record<string, unknown> {
    return this.whenSupported(V1_SDK, version, exports, () => this.patchMcpServer(exports['McpServer'], `${V1_SDK} McpServer`));
  }

  protected init(): InstrumentationNodeModuleDefinition[] {
    type Patch = (exports: Record<string, unknown>, version?: string) => unknown;
    const v1File = (path: string, patch: Patch, exportName: string) =>
      new InstrumentationNodeModuleFile(
        `${V1_SDK}/${path}`,
        ['*'],
        patch.bind(this) as never,
        ((exports: Record<string, unknown>) => this.unpatchClass(exports[exportName])) as never,
      );
    return [
      new InstrumentationNodeModuleDefinition(
        V2_SERVER,
        ['*'],
        (exports: Record<string, unknown>, version?: string) =>
          this.whenSupported(V2_SERVER, version, exports, () => {
            this.patchServer(exports['Server'], `${V2_SERVER} Server`);
            this.patchMcpServer(exports['McpServer'], `${V2_SERVER} McpServer`);
            this.patchHandlerFactory(exports);
          }),
        (exports: Record<string, unknown>) => {
          this.unpatchClass(exports['Server']);
          this.unpatchClass(exports['McpServer']);
          if (typeof exports['createMcpHandler'] === 'function') this._unwrap(exports, 'createMcpHandler');
        },
        ['dist/stdio.mjs', 'dist/stdio.cjs'].map(
          (path) =>
            new InstrumentationNodeModuleFile(
              `${V2_SERVER}/${path}`,
              ['*'],
              ((exports: Record<string, unknown>, version?: string) =>
                this.whenSupported(V2_SERVER, version, exports, () => this.patchServeStdio(exports))) as never,
              ((exports: Record<string, unknown>) => {
                if (typeof exports['serveStdio'] === 'function') this._unwrap(exports, 'serveStdio');
              }) as never,
            ),
        ),
      ),
      // ESM files only: the CJS ones are hooked in enable(), see there.
      new InstrumentationNodeModuleDefinition(V1_SDK, ['*'], undefined, undefined, [
        v1File('dist/esm/server/index.js', this.patchV1Server, 'Server'),
        v1File('dist/esm/server/mcp.js', this.patchV1McpServer, 'McpServer'),
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
    if (this._v1RequireHook !== undefined) return;
    const files: Record<string, (exports: Record<string, unknown>, version?: string) => unknown> = {
      [`${V1_SDK}/dist/cjs/server/index`]: (exports, version) => this.patchV1Server(exports, version),
      [`${V1_SDK}/dist/cjs/server/mcp`]: (exports, version) => this.patchV1McpServer(exports, version),
    };
    this._v1RequireHook = new RequireHook(Object.keys(files), { internals: true }, (exports, name, basedir) => {
      const patch = files[name.replaceAll('\\', '/')];
      if (patch !== undefined && basedir !== undefined) patch(exports as Record<string, unknown>, readPackageVersion(basedir));
      return exports;
    });
  }

  override disable(): void {
    super.disable();
    this._v1RequireHook?.unhook();
    this._v1RequireHook = undefined;
  }

  /** Patches only the SDK majors this agent was verified against; anything else is reported, not guessed at. */
  private whenSupported<T>(module: string, version: string | undefined, exports: T, patch: () => void): T {
    this.status.loaded.set(module, version);
    const major = version === undefined ? Number.NaN : Number.parseInt(version, 10);
    if (major !== SUPPORTED_MAJOR[module]) {
      this.status.unsupported.push(`${module}@${version ?? 'unknown'}`);
      return exports;
    }
    try {
      patch();
    } catch (error) {
      this.core.fail('patch', error);
    }
    return exports;
  }

  private patchServer(candidate: unknown, label: string): void {
    this.wrapConnect(candidate, label, (instance, transport) => this.core.attach(instance as object, transport));
  }

  /** `McpServer.connect` delegates to `this.server.connect`; observing here also covers apps whose `Server`
   * class was loaded through a path no hook sees (v1's relative import). `attach` is idempotent. */
  private patchMcpServer(candidate: unknown, label: string): void {
    this.wrapConnect(candidate, label, (instance, transport) => {
      const server = (instance as McpServerInstance).server;
      if (server !== undefined) this.core.attach(server, transport);
    });
  }

  private wrapConnect(candidate: unknown, label: string, before: (instance: unknown, transport: unknown) => void): void {
    if (typeof candidate !== 'function') return;
    const prototype = (candidate as ServerClass).prototype;
    if (typeof prototype?.connect !== 'function') return;
    if ((prototype.connect as unknown as Record<symbol, unknown>)[PATCHED]) {
      this.status.patched.add(label);
      return;
    }
    this._wrap(prototype, 'connect', (original) => {
      const connect = function (this: unknown, ...args: unknown[]) {
        try {
          before(this, args[0]);
        } catch {
          // attach() counts its own errors; this only guards reading the instance.
        }
        return (original as Connect).apply(this, args as [unknown]);
      };
      Object.defineProperty(connect, PATCHED, { value: true });
      return connect as Connect;
    });
    this.status.patched.add(label);
  }

  private unpatchClass(candidate: unknown): void {
    if (typeof candidate !== 'function') return;
    const prototype = (candidate as ServerClass).prototype;
    if ((prototype?.connect as unknown as Record<symbol, unknown> | undefined)?.[PATCHED]) this._unwrap(prototype, 'connect');
  }

  private patchServeStdio(exports: Record<string, unknown>): void {
    if (typeof exports['serveStdio'] !== 'function') return;
    const transportClass = exports['StdioServerTransport'];
    this._wrap(exports, 'serveStdio', (original) => wrapServeStdio(original as never, transportClass, this.core) as never);
  }

  private patchHandlerFactory(exports: Record<string, unknown>): void {
    if (typeof exports['createMcpHandler'] !== 'function') return;
    this._wrap(exports, 'createMcpHandler', (original) => wrapMcpHandlerFactory(original as never, this.core) as never);
  }
}
