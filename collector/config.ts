/**
 * Everything the collector can be told, with its defaults, and the one rule about where it may listen.
 * The CLI (bin/extscope.ts) and in-process callers (tests, embedding) both end up in {@link resolveConfig}.
 */

export interface CollectorLimits {
  /** Largest request body as received (compressed or not). */
  maxBodyBytes: number;
  /** Largest body after gzip decompression: a gzip bomb stops here, with a 413. */
  maxDecompressedBytes: number;
  /** Longest string stored from an attribute we keep (client names, methods, ids…). */
  maxAttributeLength: number;
  /** Distinct extension ids one instance may report within one UTC hour. */
  maxExtensionIdsPerInstanceHour: number;
  /** OTLP exports processed at once; past this, 503 with Retry-After. */
  maxInFlightExports: number;
  /** How far ahead of the collector's clock a point's timestamp may be. */
  maxFutureSkewMs: number;
  /** Spans looked at per trace export (the rest are skipped and counted): examples are samples, not counts. */
  maxSpansPerExport: number;
}

export interface RetentionConfig {
  /** Per-minute rollups. */
  minuteDays: number;
  /** Hourly (and daily) rollups, advertised history, span examples' upper bound. */
  hourDays: number;
  /**
   * How long the identity of every applied delta point is remembered, so that a retried export is recognised.
   * Points older than this are refused (in `partial_success`): they could no longer be told apart from a retry.
   */
  dedupHours: number;
}

export type Synchronous = 'normal' | 'full';

export interface CollectorOptions {
  host?: string;
  port?: number;
  dbPath: string;
  ingestToken?: string;
  readToken?: string;
  /** fastify/pino logger options; `false` (default for in-process use) logs nothing. */
  logger?: boolean | Record<string, unknown>;
  retention?: Partial<RetentionConfig>;
  limits?: Partial<CollectorLimits>;
  /** SQLite `synchronous` in WAL mode; see README ("Durability"). */
  synchronous?: Synchronous;
  /** An instance not heard from for this long is stale (instances API, drift). */
  staleAfterMs?: number;
  /** How often accepted points are folded into the rollups (queries fold first anyway). */
  foldIntervalMs?: number;
  /** How often retention runs. */
  maintenanceIntervalMs?: number;
  /** Recent span examples kept per matrix cell. */
  examplesPerCell?: number;
  /** Time window of the matrix gauges on /metrics. */
  metricsWindowMs?: number;
  /** How long shutdown waits for in-flight requests before closing connections. */
  shutdownGraceMs?: number;
  /** The clock; tests move it. */
  clock?: () => number;
}

export interface ResolvedConfig {
  host: string;
  port: number;
  dbPath: string;
  ingestToken: string | undefined;
  readToken: string | undefined;
  logger: boolean | Record<string, unknown>;
  retention: RetentionConfig;
  limits: CollectorLimits;
  synchronous: Synchronous;
  staleAfterMs: number;
  foldIntervalMs: number;
  maintenanceIntervalMs: number;
  examplesPerCell: number;
  metricsWindowMs: number;
  shutdownGraceMs: number;
  clock: () => number;
}

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 4318;
export const DEFAULT_DB_PATH = './data/extscope.db';

export const DEFAULT_LIMITS: CollectorLimits = {
  maxBodyBytes: 8 * 1024 * 1024,
  maxDecompressedBytes: 32 * 1024 * 1024,
  maxAttributeLength: 256,
  // The agent admits 1000 distinct ids per process (plus `_invalid` and `_OTHER`); leave it room.
  maxExtensionIdsPerInstanceHour: 1024,
  maxInFlightExports: 32,
  maxFutureSkewMs: 10 * 60_000,
  maxSpansPerExport: 10_000,
};

export const DEFAULT_RETENTION: RetentionConfig = { minuteDays: 7, hourDays: 400, dedupHours: 6 };

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

function positive(name: string, value: number, integer = true): number {
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new ConfigError(`${name} must be a positive ${integer ? 'integer' : 'number'} (got ${String(value)})`);
  }
  return value;
}

/** `localhost`, 127.0.0.0/8 and ::1 (also IPv4-mapped): the only places the collector may listen without tokens. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const lower = bare.toLowerCase();
  if (lower === 'localhost' || lower === '::1' || lower === '0:0:0:0:0:0:0:1') return true;
  const v4 = lower.startsWith('::ffff:') ? lower.slice('::ffff:'.length) : lower;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

export function resolveConfig(options: CollectorOptions): ResolvedConfig {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  for (const [name, value] of Object.entries(limits)) positive(`limits.${name}`, value);
  const retention = { ...DEFAULT_RETENTION, ...options.retention };
  for (const [name, value] of Object.entries(retention)) positive(`retention.${name}`, value, false);
  if (retention.dedupHours > retention.minuteDays * 24) {
    throw new ConfigError('retention.dedupHours must not exceed the minute retention');
  }
  const port = options.port ?? DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new ConfigError(`port must be 0..65535 (got ${String(port)})`);
  const host = options.host ?? DEFAULT_HOST;
  const ingestToken = options.ingestToken === '' ? undefined : options.ingestToken;
  const readToken = options.readToken === '' ? undefined : options.readToken;
  if (!isLoopbackHost(host)) {
    const missing = [ingestToken === undefined && 'EXTSCOPE_INGEST_TOKEN', readToken === undefined && 'EXTSCOPE_READ_TOKEN'].filter(Boolean);
    if (missing.length > 0) {
      throw new ConfigError(
        `refusing to listen on ${host}: it is not a loopback address and ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set. ` +
          'Without both tokens anyone who can reach the port could write telemetry or read the matrix. ' +
          'Set the tokens, or listen on 127.0.0.1.',
      );
    }
  }
  if (options.dbPath === '') throw new ConfigError('dbPath must not be empty');
  const synchronous = options.synchronous ?? 'normal';
  if (synchronous !== 'normal' && synchronous !== 'full') throw new ConfigError(`synchronous must be normal or full (got ${String(synchronous)})`);
  return {
    host,
    port,
    dbPath: options.dbPath,
    ingestToken,
    readToken,
    logger: options.logger ?? false,
    retention,
    limits,
    synchronous,
    staleAfterMs: positive('staleAfterMs', options.staleAfterMs ?? 5 * 60_000),
    foldIntervalMs: positive('foldIntervalMs', options.foldIntervalMs ?? 1000),
    maintenanceIntervalMs: positive('maintenanceIntervalMs', options.maintenanceIntervalMs ?? 60_000),
    examplesPerCell: positive('examplesPerCell', options.examplesPerCell ?? 5),
    metricsWindowMs: positive('metricsWindowMs', options.metricsWindowMs ?? 60 * 60_000),
    shutdownGraceMs: positive('shutdownGraceMs', options.shutdownGraceMs ?? 10_000),
    clock: options.clock ?? Date.now,
  };
}
