import type { WireRecording } from './connection.js';
import type { RequestPipeline } from '../record/request-pipeline.js';
import { type HttpWireTap, tapHttpServers } from './http.js';
import { type StdioWireTap, tapStdio } from './stdio.js';

/** Where the wire saw MCP traffic: a stdio server's streams, or an HTTP server's requests. */
type WireSide = 'stdio' | 'http';

/** What the wire taps need from the agent. */
export interface WireHost extends WireRecording {
  readonly pipeline: RequestPipeline;
  /**
   * An SDK copy was patched (or a server was attached by hand, or the fallback only watches): its connections
   * record the requests, and the wire only watches whether MCP traffic arrives at all, then stops.
   */
  sdkObserved(): boolean;
  /** MCP requests were seen arriving on `side` (the first time only). */
  mcpSeen(side: WireSide): void;
}

/**
 * The wire-level fallback for servers whose SDK copy no hook can patch (bundled into the app by esbuild,
 * rollup, bun build…): the JSON-RPC frames a stdio server reads on stdin and writes on stdout, and the MCP
 * POST bodies an HTTP server (`node:http`) receives with the JSON or SSE answers it writes. Both only observe:
 * the bytes read and written are handed on unchanged, before or after being looked at.
 *
 * When an SDK copy was patched by the time traffic arrives, the fallback steps aside (it unhooks itself), so
 * it costs nothing then; it only notes that MCP traffic arrived, for the warning given when nothing records it.
 */
export class WireFallback {
  private stdio: StdioWireTap | undefined;
  private http: HttpWireTap | undefined;

  constructor(private readonly host: WireHost) {}

  start(): void {
    try {
      this.stdio ??= tapStdio(this.host);
    } catch (error) {
      this.host.pipeline.fail('wire_stdio', error);
    }
    try {
      this.http ??= tapHttpServers(this.host);
    } catch (error) {
      this.host.pipeline.fail('wire_http', error);
    }
  }

  stop(): void {
    this.stdio?.stop();
    this.http?.stop();
    this.stdio = undefined;
    this.http = undefined;
  }
}
