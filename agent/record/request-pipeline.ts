import { type Meter, type Span, type Tracer, diag } from '@opentelemetry/api';
import type { RequestSink, StartedRequest } from '../observe/pairing.js';
import type { ExtensionMapLimits } from '../observe/extension-map.js';
import { type JsonRpcRequest, type Outcome, type RequestFacts, type RequestReading, protocolVersionHeader, readRequest } from '../observe/request-facts.js';
import type { ServerAdvertisement } from '../observe/server-advertisement.js';
import { type MetricSnapshot, Recorder, type RecorderLimits } from './recorder.js';
import { finishRequestSpan, startRequestSpan } from './request-span.js';

export interface PipelineOptions extends RecorderLimits {
  /** Make a SERVER span per request. */
  spans: boolean;
  /** Export raw client settings on spans. */
  captureSettings: boolean;
  limits: ExtensionMapLimits;
}

/**
 * Where every observed request ends: counted by the {@link Recorder} and, when spans are on, given a span that
 * starts when the request arrives and ends with its outcome. Also counts (and logs once per stage) the agent's
 * internal errors, which are never thrown into the application.
 */
export class RequestPipeline implements RequestSink {
  readonly reading: RequestReading;
  private readonly recorder: Recorder;
  private readonly reportedStages = new Set<string>();
  private recordedCount = 0;

  constructor(
    private readonly options: PipelineOptions,
    private readonly tracer: () => Tracer,
  ) {
    this.reading = {
      limits: options.limits,
      declarations: { last: undefined, settingsRead: options.spans },
      spanDetails: options.spans,
      protocolVersionHint: protocolVersionHeader,
    };
    this.recorder = new Recorder(options);
  }

  /** (Re)binds the metric instruments to a meter (see {@link Recorder.bind}). */
  bind(meter: Meter): void {
    this.recorder.bind(meter);
  }

  /** The process is ending: the next export is its last and says so (see {@link Recorder.markEnding}). */
  markEnding(): void {
    this.recorder.markEnding();
  }

  /** Every instrument's points now, read synchronously (see {@link Recorder.snapshot}). */
  snapshot(): MetricSnapshot[] {
    return this.recorder.snapshot();
  }

  /** A server object connected: what it advertises is reported by the gauges from now on. */
  advertise(server: ServerAdvertisement): void {
    this.recorder.advertise(server);
  }

  start(facts: RequestFacts, startTime?: number): StartedRequest | undefined {
    return this.options.spans ? startRequestSpan(this.tracer(), facts, startTime) : undefined;
  }

  /** Requests recorded so far (by any path: connections, entries, the wire). */
  get recorded(): number {
    return this.recordedCount;
  }

  finish(facts: RequestFacts, server: ServerAdvertisement | undefined, outcome: Outcome, span: Span | undefined, sessionId: string | undefined): void {
    this.recordedCount++;
    this.recorder.record(facts, server, outcome);
    if (span !== undefined) finishRequestSpan(span, facts, server, outcome, sessionId, this.options.captureSettings);
  }

  /**
   * A request an entry (`createMcpHandler`, `serveStdio`) answered itself, so no server instance saw it:
   * recorded with no server (its declaration `unknown`), its span started at `startTime`.
   */
  recordEntryAnswer(request: JsonRpcRequest, outcome: Outcome, startTime: number): void {
    const facts = readRequest(request, undefined, this.reading);
    this.finish(facts, undefined, outcome, this.start(facts, startTime)?.span, undefined);
  }

  /** Counts an error in `extscope.agent.errors` under `stage`, without logging it. */
  count(stage: string): void {
    try {
      this.recorder.countError(stage);
    } catch {
      // As fail().
    }
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
