import { trace } from '@opentelemetry/api';
import { getStringListFromEnv } from '@opentelemetry/core';
import { EntryExchanges } from '../observe/entry-exchange.js';
import { ServerConnections } from '../patches/server-connect.js';
import type { WireRecording } from './connection.js';
import { RequestPipeline } from '../record/request-pipeline.js';
import { ExportHealth } from '../register/export-health.js';
import { type AgentSdk, installStderrDiagLogger, startAgentSdk } from '../register/sdk.js';
import type { ServerIdentity } from '../types.js';
import { PACKAGE_NAME, PACKAGE_VERSION } from '../version.js';
import { MAX_EXTENSION_ID_LENGTH, MAX_IDS_PER_REQUEST, type Transport } from '../../contract/index.js';

/** A boolean environment variable: `true`/`false` (any case); anything else is the default. */
function envFlag(name: string, fallback: boolean): boolean {
  const value = process.env[name]?.trim().toLowerCase();
  if (value === 'true') return true;
  if (value === 'false') return false;
  return fallback;
}

/**
 * The agent for a server in another process (`extscope wrap`, `extscope proxy`): the wire readers' recording
 * side, with no SDK to patch. Requests go through the same {@link RequestPipeline} as in-process; the
 * OpenTelemetry SDK starts when the first server names itself in an answer (`service.name` from its
 * `serverInfo` unless `OTEL_SERVICE_NAME` says otherwise), configured by the same `OTEL_*` variables, with the
 * same stderr lines when exports fail. One instance is one `service.instance.id`.
 */
export class StandaloneAgent implements WireRecording {
  readonly pipeline: RequestPipeline;
  private readonly servers: ServerConnections;
  private sdk: AgentSdk | undefined;
  private readonly spans: boolean;

  /** `transport`: how the server is reached (`wrap`: stdio, one client session per process; `proxy`: http). */
  constructor(private readonly transport: Transport) {
    installStderrDiagLogger();
    const tracesOff = getStringListFromEnv('OTEL_TRACES_EXPORTER')?.includes('none') ?? false;
    this.spans = !tracesOff && envFlag('EXTSCOPE_SPANS', true);
    const tracer = trace.getTracer(PACKAGE_NAME, PACKAGE_VERSION);
    this.pipeline = new RequestPipeline(
      {
        spans: this.spans,
        captureSettings: envFlag('EXTSCOPE_CAPTURE_SETTINGS', false),
        maxStreams: 10_000,
        cardinalityLimit: 1000,
        limits: { maxIds: MAX_IDS_PER_REQUEST, maxIdLength: MAX_EXTENSION_ID_LENGTH },
      },
      () => tracer,
    );
    this.servers = new ServerConnections(this.pipeline, new EntryExchanges(), (identity) => this.startSdk(identity));
  }

  get advertisements(): ServerConnections['advertisements'] {
    return this.servers.advertisements;
  }

  announce: WireRecording['announce'] = (server) => this.servers.announce(server);
  identify: WireRecording['identify'] = (identity) => this.servers.identify(identity);

  private startSdk(identity: ServerIdentity): void {
    if (this.sdk !== undefined) return;
    const health = new ExportHealth(
      (line) => process.stderr.write(`${line}\n`),
      (signal) => this.pipeline.count(`export_${signal}`),
    );
    this.sdk = startAgentSdk(identity, { spans: this.spans, transport: this.transport }, health);
    // The tracer above is the API's proxy: it delegates to the provider registered now.
    if (this.sdk.meterProvider !== undefined) this.pipeline.bind(this.sdk.meterProvider.getMeter(PACKAGE_NAME, PACKAGE_VERSION));
  }

  /**
   * Exports what was counted and stops the SDK, within `deadlineMs`. When requests were recorded but no
   * server ever named itself (it refused everything, or died first), the SDK starts now, unnamed, so no count
   * is lost. The last export says the process ended (`extscope.process.ended`).
   */
  async shutdown(deadlineMs?: number): Promise<void> {
    if (this.sdk === undefined && this.pipeline.recorded > 0) this.startSdk({});
    // The export the shutdown makes is the last: it says so, and the collector ends the instance at once.
    this.pipeline.markEnding();
    await this.sdk?.shutdown(deadlineMs);
  }
}
