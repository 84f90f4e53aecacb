import { type Context, type Span, type Tracer, diag } from '@opentelemetry/api';
import { Connection } from '../observe/connection.js';
import type { ExtensionMapLimits } from '../observe/extension-map.js';
import { Recorder, type RequestRecord } from './recorder.js';
import { type JsonRpcRequest, type LegacyHandshake, type Outcome, type RequestFacts, isRequest, readRequest } from '../observe/request-facts.js';
import { finishRequestSpan, startRequestSpan } from './request-span.js';
import { type ServerLike, ServerViews } from '../observe/server-advertisement.js';
import { tapTransport } from '../patches/transport-tap.js';
import type { ResolvedConfig, ServerIdentity } from '../types.js';

/**
 * Everything the patches share: configuration, the recorder, what each server advertises and what each
 * 2025-era `initialize` declared. The patches only call {@link attach}; the rest is per-connection.
 */
export class AgentCore {
  readonly limits: ExtensionMapLimits;
  readonly recorder: Recorder;
  readonly legacy = new WeakMap<object, LegacyHandshake>();
  /**
   * The last answer a server instance sent for a request it recorded. A stdio entry's channel hands that same
   * object to the entry's wire synchronously, so the entry can tell the answers it must not record again.
   */
  lastRecordedAnswer: object | undefined;
  private readonly views: ServerViews;
  private readonly tapped = new WeakSet<object>();
  private readonly reportedStages = new Set<string>();
  private firstServerSeen = false;

  constructor(
    readonly config: ResolvedConfig,
    private readonly tracer: () => Tracer,
    private readonly onFirstServer: ((server: ServerIdentity) => void) | undefined,
  ) {
    this.limits = { maxIds: config.maxIdsPerRequest, maxIdLength: config.maxIdLength };
    this.recorder = new Recorder(config);
    this.views = new ServerViews(this.limits);
  }

  /** Starts observing `transport` on behalf of `server`. Idempotent per transport; never throws. */
  attach(server: ServerLike, transport: unknown): void {
    try {
      if (typeof transport !== 'object' || transport === null || this.tapped.has(transport)) return;
      // Marked first: McpServer.connect and Server.connect both call here, and a failure is not retried.
      this.tapped.add(transport);
      const view = this.views.read(server);
      tapTransport(transport, new Connection(this, server, view, transport as { sessionId?: unknown }));
      this.recorder.advertise(view);
      if (!this.firstServerSeen) {
        this.firstServerSeen = true;
        this.onFirstServer?.(view.identity);
      }
    } catch (error) {
      this.fail('attach', error);
    }
  }

  startSpan(facts: RequestFacts, message: JsonRpcRequest, startTime?: number): { span: Span; context: Context } | undefined {
    if (!this.config.spans) return undefined;
    return startRequestSpan(this.tracer(), facts, message, startTime);
  }

  record(record: RequestRecord, span: Span | undefined, sessionId: string | undefined): void {
    this.recorder.record(record);
    if (span !== undefined) finishRequestSpan(span, record, sessionId, this.config.captureSettings);
  }

  /** Records a request an entry (HTTP handler, stdio entry) answered before any server instance saw it. */
  recordUnreached(message: unknown, outcome: Outcome, startTime: number): void {
    if (!isRequest(message)) return;
    const facts = readRequest(message, undefined, this.limits);
    this.record({ facts, server: undefined, outcome }, this.startSpan(facts, message, startTime)?.span, undefined);
  }

  /** Counts an internal error; logs the first one of each stage through the OTel diag logger. */
  fail(stage: string, error: unknown): void {
    try {
      this.recorder.countError(stage);
      if (!this.reportedStages.has(stage)) {
        this.reportedStages.add(stage);
        diag.warn(`extscope: internal error at ${stage} (counted in extscope.agent.errors, further ones not logged)`, error);
      }
    } catch {
      // Nothing left to do safely: the agent must never throw into the application.
    }
  }
}
