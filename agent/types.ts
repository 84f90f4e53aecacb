import type { InstrumentationConfig } from '@opentelemetry/instrumentation';
import type { Transport } from '../contract/index.js';

/** Options of `ExtscopeInstrumentation`. Every limit applies to client-controlled input. */
export interface ExtscopeInstrumentationConfig extends InstrumentationConfig {
  /**
   * Create a SERVER span per request (metrics are always recorded).
   * @default true
   */
  spans?: boolean;
  /**
   * Most extension ids recorded per request and per side; the rest are counted as dropped.
   * @default 64 (the contract's `MAX_IDS_PER_REQUEST`)
   */
  maxIdsPerRequest?: number;
  /**
   * Longest extension id accepted; longer ids count as invalid.
   * @default 128 (the contract's `MAX_EXTENSION_ID_LENGTH`)
   */
  maxIdLength?: number;
  /**
   * Distinct values per metric attribute before new ones fold into `_OTHER`.
   * @default 1000
   */
  cardinalityLimit?: number;
  /**
   * Distinct attribute combinations per metric before new ones go to one overflow stream.
   * @default 10000
   */
  maxStreams?: number;
  /**
   * Export raw client settings values on spans (they may be sensitive).
   * @default false
   */
  captureSettings?: boolean;
  /**
   * Also watch the wire for servers no SDK hook can patch (a bundled SDK copy): a stdio server's JSON-RPC
   * frames on stdin/stdout, an HTTP server's MCP POST bodies and answers (`node:http`). Used only when no SDK
   * copy was patched; it steps aside otherwise. The zero-code entry turns it on. `'watch'`: never record, only
   * notice MCP traffic (for `onMcpTraffic`).
   * @default false
   */
  wireFallback?: boolean | 'watch';
  /** Called once when the wire sees MCP requests arrive (with `wireFallback`), on stdio or HTTP. */
  onMcpTraffic?: (side: 'stdio' | 'http') => void;
  /**
   * When the first server connects, hook the process's ways out that let asynchronous code run (the event loop
   * draining; SIGTERM, SIGINT and SIGHUP, raised again afterwards when the app does not listen) to flush the meter
   * and tracer providers extscope records to, without shutting them down, bounded by 1.5 s: a short-lived stdio
   * server's counts then leave with it under an application's own SDK. `process.exit()` runs no asynchronous code:
   * what was counted since the last export is lost there unless the app flushes first.
   * The zero-code entry sets this to false: it flushes its own SDK and adds a synchronous last export.
   * @default true
   */
  flushOnExit?: boolean;
  /**
   * Called once, the first time a server object connects (the zero-code entry starts its SDK here), with how it is
   * reached when the transport tells (`stdio`: one client session per process; `http`: long-lived).
   */
  onFirstServer?: (server: ServerIdentity, transport: Transport | undefined) => void;
}

/** An MCP server's `serverInfo` name and version, as its constructor was given them. */
export interface ServerIdentity {
  name?: string;
  version?: string;
}
