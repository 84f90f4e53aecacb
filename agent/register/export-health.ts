import { type ExportResult, ExportResultCode } from '@opentelemetry/core';

/** The signal an exporter carries, as named on stderr and in `extscope.agent.errors` (`export_<signal>`). */
export type Signal = 'metrics' | 'traces';

/** An OTLP exporter, as far as the health check touches it. */
interface Exporter {
  export(items: never, resultCallback: (result: ExportResult) => void): void;
}

/** A "starts failing" line is printed at most this often per signal; its "works again" line always follows. */
export const FAILING_LINE_INTERVAL_MS = 5 * 60_000;

interface SignalState {
  failing: boolean;
  /** The current failure was announced on stderr (so its recovery is too). */
  announced: boolean;
  lastAnnouncedAt: number;
  failedSinceAnnounced: number;
}

/**
 * gRPC status names (grpc/doc/statuscodes.md). The gRPC exporter fails with grpc-js's ServiceError, whose numeric
 * `code` is a gRPC status, not an HTTP one (the HTTP exporters' OTLPExporterError carries the HTTP status).
 */
const GRPC_STATUS = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];
const GRPC = { DEADLINE_EXCEEDED: 4, PERMISSION_DENIED: 7, UNAVAILABLE: 14, UNAUTHENTICATED: 16 } as const;

/** What failed: an HTTP status, a gRPC status, a socket error code, or the message. */
type Failure = { kind: 'http'; code: number } | { kind: 'grpc'; code: number } | { kind: 'other'; text: string };

function failureOf(error: unknown): Failure {
  const { code, message, metadata } = (error ?? {}) as { code?: unknown; message?: unknown; metadata?: unknown };
  // grpc-js's ServiceError: a status code with the call's metadata beside it.
  if (typeof code === 'number') return typeof metadata === 'object' && metadata !== null ? { kind: 'grpc', code } : { kind: 'http', code };
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  if (typeof code === 'string') return { kind: 'other', text: code };
  if (typeof cause === 'string') return { kind: 'other', text: cause };
  return { kind: 'other', text: typeof message === 'string' && message.length > 0 ? message.slice(0, 200) : 'export failed' };
}

function describe(failure: Failure): string {
  if (failure.kind === 'http') return `HTTP ${failure.code}`;
  if (failure.kind === 'grpc') return `gRPC ${GRPC_STATUS[failure.code] ?? failure.code}`;
  return failure.text;
}

const TOKEN_HINT = 'is the ingest token right? (OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer <token>")';
const REACH_HINT = 'is the collector running and reachable? (OTEL_EXPORTER_OTLP_ENDPOINT)';

function hint(failure: Failure): string {
  if (failure.kind === 'http') return failure.code === 401 || failure.code === 403 ? TOKEN_HINT : 'the collector refused the export';
  if (failure.kind === 'grpc') {
    if (failure.code === GRPC.UNAUTHENTICATED || failure.code === GRPC.PERMISSION_DENIED) return TOKEN_HINT;
    if (failure.code === GRPC.UNAVAILABLE || failure.code === GRPC.DEADLINE_EXCEEDED) return REACH_HINT;
    return 'the collector refused the export';
  }
  return REACH_HINT;
}

/**
 * Makes a failing export visible: the OpenTelemetry exporters report failures only through the diagnostic
 * logger, which is off unless `OTEL_LOG_LEVEL` is set, so a wrong token or a dead collector would lose data
 * in silence. One line goes to stderr when a signal's exports start failing (rate-limited), one when they work
 * again; every failed export is counted. Never stdout.
 */
export class ExportHealth {
  private readonly states = new Map<Signal, SignalState>();
  private readonly rejections = new Map<Signal, { message: string; at: number }>();

  constructor(
    private readonly write: (line: string) => void,
    private readonly countFailure: (signal: Signal) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Wraps `exporter.export` to see each result; the result still reaches the SDK unchanged. */
  watch<T extends Exporter>(exporter: T, signal: Signal, endpoint: string): T {
    const original = exporter.export.bind(exporter);
    exporter.export = ((items: never, resultCallback: (result: ExportResult) => void) =>
      original(items, (result) => {
        try {
          this.report(signal, endpoint, result);
        } catch {
          // Reporting must never disturb the export.
        }
        resultCallback(result);
      })) as T['export'];
    return exporter;
  }

  /**
   * A partial-success answer: one stderr line, repeated only when the collector's reason changes or after
   * {@link FAILING_LINE_INTERVAL_MS} (every export of the same refused streams gets the same answer).
   */
  rejected(signal: Signal, endpoint: string, rejection: Rejection): void {
    const last = this.rejections.get(signal);
    const now = this.now();
    if (last !== undefined && last.message === rejection.message && now - last.at < FAILING_LINE_INTERVAL_MS) return;
    this.rejections.set(signal, { message: rejection.message, at: now });
    this.write(rejectionLine(signal, endpoint, rejection));
  }

  report(signal: Signal, endpoint: string, result: ExportResult): void {
    let state = this.states.get(signal);
    if (state === undefined) {
      state = { failing: false, announced: false, lastAnnouncedAt: Number.NEGATIVE_INFINITY, failedSinceAnnounced: 0 };
      this.states.set(signal, state);
    }
    if (result.code === ExportResultCode.SUCCESS) {
      if (state.failing && state.announced) {
        this.write(
          `extscope: exporting ${signal} to ${endpoint} works again (${state.failedSinceAnnounced} export${state.failedSinceAnnounced === 1 ? '' : 's'} had failed)`,
        );
      }
      state.failing = false;
      state.announced = false;
      return;
    }
    this.countFailure(signal);
    if (state.failing) {
      state.failedSinceAnnounced++;
      return;
    }
    state.failing = true;
    state.failedSinceAnnounced = 1;
    const now = this.now();
    if (now - state.lastAnnouncedAt < FAILING_LINE_INTERVAL_MS) return;
    state.announced = true;
    state.lastAnnouncedAt = now;
    const failure = failureOf(result.error);
    this.write(
      `extscope: exporting ${signal} to ${endpoint} fails (${describe(failure)}): ${hint(failure)}; counted in extscope.agent.errors (a line follows once exports succeed)`,
    );
  }
}

/** A collector's partial-success answer: points it refused, and its reason. */
export interface Rejection {
  points: number;
  message: string;
}

/**
 * Calls `onRejected` for every partial-success answer `exporter` receives. The OTLP exporters accept such an
 * answer as a success and tell of it only through the diagnostic logger (off by default), so points a collector
 * refused would vanish unseen; the exporters read the answer in a response handler of their export delegate,
 * which this wraps (`_delegate._responseHandler`, present in the 0.2xx exporters; without it, nothing is watched).
 * Returns whether it could watch.
 */
export function watchRejections(exporter: unknown, onRejected: (rejection: Rejection) => void): boolean {
  const handler = (exporter as { _delegate?: { _responseHandler?: { handleResponse?: unknown } } } | undefined)?._delegate?._responseHandler;
  if (handler === undefined || typeof handler.handleResponse !== 'function') return false;
  const original = (handler.handleResponse as (response: unknown) => void).bind(handler);
  handler.handleResponse = (response: unknown) => {
    try {
      const partial = (response as { partialSuccess?: { rejectedDataPoints?: unknown; rejectedSpans?: unknown; errorMessage?: unknown } } | undefined)
        ?.partialSuccess;
      const points = Number(partial?.rejectedDataPoints ?? partial?.rejectedSpans ?? 0);
      const message = typeof partial?.errorMessage === 'string' ? partial.errorMessage : '';
      if (points > 0 || message !== '') onRejected({ points, message });
    } catch {
      // Watching must never disturb the export.
    }
    original(response);
  };
  return true;
}

/** The stderr line for a partial-success answer: what was refused, and the collector's own reason. */
export function rejectionLine(signal: Signal, endpoint: string, rejection: Rejection): string {
  const what = signal === 'metrics' ? 'point' : 'span';
  return `extscope: the collector at ${endpoint} refused ${rejection.points} ${what}${rejection.points === 1 ? '' : 's'} of an export: ${rejection.message.slice(0, 500) || '(no reason given)'}`;
}
