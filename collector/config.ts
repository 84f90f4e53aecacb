/**
 * Everything the collector can be told, with its defaults, and the one rule about where it may listen.
 * The CLI (bin/extscope.ts) and in-process callers (tests, embedding) both end up in {@link resolveConfig};
 * the CLI reads the environment through {@link ENVIRONMENT}, which its help is generated from.
 */
import { MAX_ATTRIBUTE_LENGTH } from '../contract/index.js';
import { DELIVERY_ENVIRONMENT, type DeliveryConfig, type DeliveryOptions, resolveDeliveryConfig } from './alerting/delivery/config.js';
import { refuseOwnAddress } from './alerting/delivery/own-address.js';
import { checkTraceUrlTemplate } from './http/trace-link.js';
import { ConfigError } from './model/errors.js';
import { MS_PER_HOUR, MS_PER_MINUTE, MS_PER_SECOND } from './model/time.js';
import { DEFAULT_STATEMENT_TIMEOUTS, type Synchronous, checkDbLocation } from './store/open.js';
import { DEFAULT_RETENTION, type RetentionConfig } from './store/store.js';
import type { EnvironmentVariable } from './environment.js';

export interface CollectorLimits {
  /** Largest request body as received (compressed or not). */
  maxBodyBytes: number;
  /** Largest body after gzip decompression: a gzip bomb stops here, with a 413. */
  maxDecompressedBytes: number;
  /** Longest string stored from an attribute we keep (client names, methods, ids…). */
  maxAttributeLength: number;
  /** Distinct extension ids one instance may report within one UTC hour. */
  maxExtensionIdsPerInstanceHour: number;
  /**
   * Distinct values kept per sender-controlled dimension (client names, client versions, server names and
   * versions, methods, protocol versions, status codes); new values past it are stored as `_OTHER`.
   */
  maxValuesPerDimension: number;
  /** Instances (service, instance id) kept; new ones past it are counted under the service's instance `_OTHER`. Service names count as a dimension above. */
  maxInstances: number;
  /** Bytes of gunzipped output held at once across all exports; past this, 503 with Retry-After. */
  maxDecompressingBytes: number;
  /** Failed authentications one client address may make per minute before it is answered 429. */
  maxAuthFailuresPerMinute: number;
  /** OTLP exports decoded and processed at once (each takes its slot once it has arrived in full); past this, 503 with Retry-After. */
  maxInFlightExports: number;
  /**
   * Bytes of export bodies (HTTP bodies, gRPC messages before the half-close) still arriving, across all
   * connections; one peer address may hold its fair share of it. Past it, bodies that are not arriving give their
   * bytes back, then 503 with Retry-After.
   */
  maxReceivingBytes: number;
  /**
   * How long a request may take to arrive in full (HTTP headers and body, a gRPC call's message) before it is
   * refused and its connection or stream closed: what a stalled sender can hold, it holds this long at most.
   */
  receiveTimeoutMs: number;
  /** Rows × extension ids one matrix read may ask for (`limit` × `extensionLimit`); past it, 400. */
  maxMatrixCells: number;
  /** Cell (or step) totals one read may scan; past it, 400 (narrow the range or filter). */
  maxScannedCells: number;
  /** Heavy reads (matrix, trends, time series) computed at once; a few more wait briefly, the rest get 503. */
  maxHeavyReads: number;
  /** How far ahead of the collector's clock a point's timestamp may be. */
  maxFutureSkewMs: number;
  /** Spans looked at per trace export (the rest are skipped and counted): examples are samples, not counts. */
  maxSpansPerExport: number;
  /** How long an online backup's answer may make no progress (its client reads nothing) before it is dropped. */
  backupIdleMs: number;
  /**
   * How long an online backup's answer may take in all: a client reading a trickle (16 KB every 20 s) makes
   * progress, so only this bounds how long it holds the one backup slot and the copy in the temporary directory.
   */
  backupDeadlineMs: number;
  /** PostgreSQL: how long one statement may run before the database cancels it (`statement_timeout`). */
  pgStatementTimeoutMs: number;
  /**
   * PostgreSQL: how long one statement may wait for a lock (`lock_timeout`): a table locked elsewhere, or another
   * replica's fold, holds an export or a read this long at most (then 503, or a read from what is folded).
   */
  pgLockTimeoutMs: number;
}

export interface CollectorOptions {
  host?: string;
  /**
   * Names accepted in the `Host` header besides the loopback ones (`localhost`, `127.x`, `[::1]`): those a reverse
   * proxy passes on, or the names a collector beyond loopback is reached by. Unset beyond loopback: any `Host`.
   */
  allowedHosts?: string[];
  port?: number;
  /**
   * The OTLP/gRPC receiver's port, on the same host: default 4317 (0 when `port` is 0: any free port);
   * `null` turns the receiver off.
   */
  grpcPort?: number | null;
  dbPath: string;
  ingestToken?: string;
  readToken?: string;
  /** Bearer token of the admin routes (`/admin/*`, e.g. the online backup); without it they are open only when no token is set. */
  adminToken?: string;
  /** fastify/pino logger options; `false` (default for in-process use) logs nothing. */
  logger?: boolean | Record<string, unknown>;
  retention?: Partial<RetentionConfig>;
  limits?: Partial<CollectorLimits>;
  /** SQLite `synchronous` in WAL mode; see README ("Durability"). */
  synchronous?: Synchronous;
  /** An instance not heard from for this long is stale (instances API, drift). */
  staleAfterMs?: number;
  /** An instance not heard from for this long is left out of the instances API (its counts stay in the matrix). */
  instanceTtlMs?: number;
  /**
   * An ended session or instance (its last export said so, or a stdio session went silent) stays listed this long,
   * for the instances and builds API's `ended=true` (the Fleet view's "show ended"); the live view drops it at once.
   */
  endedTtlMs?: number;
  /** How often accepted points are folded into the rollups (queries fold first anyway). */
  foldIntervalMs?: number;
  /** How often retention runs. */
  maintenanceIntervalMs?: number;
  /** Recent span examples kept per matrix cell. */
  examplesPerCell?: number;
  /** How long shutdown waits for in-flight requests before closing connections. */
  shutdownGraceMs?: number;
  /** Below this much free space on the database's file system, /readyz says not ready (default 1 MiB). */
  minFreeBytes?: number;
  /** Alert receivers (webhook, Alertmanager) and how delivery retries. */
  delivery?: DeliveryOptions;
  /** The alert rules file (YAML or JSON); absent: the default rules. See docs/alerting.md. */
  rulesPath?: string;
  /** How often the alert rules are evaluated, overriding the rules file's `interval` (default 30 s). */
  alertIntervalMs?: number;
  /** Where an example's trace opens: a URL with `{traceId}` (and optionally `{spanId}`) in it; absent: no trace links. */
  traceUrl?: string;
  /** The clock; tests move it. */
  clock?: () => number;
}

export interface ResolvedConfig {
  host: string;
  allowedHosts: string[] | undefined;
  port: number;
  /** null: no OTLP/gRPC receiver. */
  grpcPort: number | null;
  dbPath: string;
  ingestToken: string | undefined;
  readToken: string | undefined;
  adminToken: string | undefined;
  logger: boolean | Record<string, unknown>;
  retention: RetentionConfig;
  limits: CollectorLimits;
  synchronous: Synchronous;
  staleAfterMs: number;
  instanceTtlMs: number;
  endedTtlMs: number;
  foldIntervalMs: number;
  maintenanceIntervalMs: number;
  examplesPerCell: number;
  shutdownGraceMs: number;
  minFreeBytes: number;
  delivery: DeliveryConfig;
  rulesPath: string | undefined;
  alertIntervalMs: number | undefined;
  traceUrl: string | undefined;
  clock: () => number;
}

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 4318;
/** The OTLP/gRPC default port. */
export const DEFAULT_GRPC_PORT = 4317;
export const DEFAULT_DB_PATH = './data/extscope.db';

export const DEFAULT_LIMITS: CollectorLimits = {
  maxBodyBytes: 8 * 1024 * 1024,
  maxDecompressedBytes: 32 * 1024 * 1024,
  maxAttributeLength: MAX_ATTRIBUTE_LENGTH,
  // The agent admits 1000 distinct ids per process (plus `_invalid` and `_OTHER`); leave it room.
  maxExtensionIdsPerInstanceHour: 1024,
  maxValuesPerDimension: 2000,
  maxInstances: 20_000,
  maxDecompressingBytes: 128 * 1024 * 1024,
  maxAuthFailuresPerMinute: 30,
  maxInFlightExports: 32,
  maxReceivingBytes: 64 * 1024 * 1024,
  receiveTimeoutMs: 10_000,
  // The default matrix: 500 rows × 200 ids.
  maxMatrixCells: 100_000,
  maxScannedCells: 1_000_000,
  // The event loop is one thread: two heavy reads at once take as long, and block it twice as long at a time.
  maxHeavyReads: 1,
  maxFutureSkewMs: 10 * MS_PER_MINUTE,
  maxSpansPerExport: 10_000,
  backupIdleMs: MS_PER_MINUTE,
  // A 10 GB database at 20 MB/s takes ~8 minutes: room for a slow link, not for a client that keeps the slot.
  backupDeadlineMs: 15 * MS_PER_MINUTE,
  pgStatementTimeoutMs: DEFAULT_STATEMENT_TIMEOUTS.statementTimeoutMs,
  pgLockTimeoutMs: DEFAULT_STATEMENT_TIMEOUTS.lockTimeoutMs,
};

const DEFAULT_SYNCHRONOUS: Synchronous = 'normal';
const DEFAULT_LOG_LEVEL = 'info';

const DEFAULTS = {
  staleAfterMs: 5 * MS_PER_MINUTE,
  instanceTtlMs: 7 * 24 * MS_PER_HOUR,
  endedTtlMs: MS_PER_HOUR,
  foldIntervalMs: MS_PER_SECOND,
  maintenanceIntervalMs: MS_PER_MINUTE,
  examplesPerCell: 5,
  shutdownGraceMs: 10 * MS_PER_SECOND,
  minFreeBytes: 1024 * 1024,
} as const;

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

/** Shortest bearer token accepted when listening beyond loopback. */
const MIN_TOKEN_LENGTH = 16;

/** Why a token is too weak to guard a reachable port, or undefined when it will do. */
function tokenWeakness(token: string): string | undefined {
  if (token.length < MIN_TOKEN_LENGTH) return `is ${token.length} characters long (at least ${MIN_TOKEN_LENGTH} required)`;
  if (new Set(token).size === 1) return 'repeats a single character';
  return undefined;
}

export function resolveConfig(options: CollectorOptions): ResolvedConfig {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  for (const [name, value] of Object.entries(limits)) positive(`limits.${name}`, value);
  if (limits.maxDecompressingBytes < limits.maxDecompressedBytes) {
    throw new ConfigError('limits.maxDecompressingBytes (all exports at once) must be at least limits.maxDecompressedBytes (one export)');
  }
  if (limits.maxReceivingBytes < limits.maxBodyBytes) {
    throw new ConfigError('limits.maxReceivingBytes (bodies arriving at once) must be at least limits.maxBodyBytes (one body)');
  }
  const retention = { ...DEFAULT_RETENTION, ...options.retention };
  for (const [name, value] of Object.entries(retention)) positive(`retention.${name}`, value, false);
  if (retention.dedupHours > retention.minuteDays * 24) {
    throw new ConfigError('retention.dedupHours must not exceed the minute retention');
  }
  const port = options.port ?? DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new ConfigError(`port must be 0..65535 (got ${String(port)})`);
  // Asked for any free HTTP port (tests, embedding), the gRPC receiver takes any free port too: never a fixed one by surprise.
  const grpcPort = options.grpcPort === undefined ? (port === 0 ? 0 : DEFAULT_GRPC_PORT) : options.grpcPort;
  if (grpcPort !== null && (!Number.isInteger(grpcPort) || grpcPort < 0 || grpcPort > 65_535)) {
    throw new ConfigError(`grpcPort must be 0..65535, or off (got ${String(grpcPort)})`);
  }
  const host = options.host ?? DEFAULT_HOST;
  const ingestToken = options.ingestToken === '' ? undefined : options.ingestToken;
  const readToken = options.readToken === '' ? undefined : options.readToken;
  const adminToken = options.adminToken === '' ? undefined : options.adminToken;
  if (!isLoopbackHost(host)) {
    const missing = [ingestToken === undefined && 'EXTSCOPE_INGEST_TOKEN', readToken === undefined && 'EXTSCOPE_READ_TOKEN'].filter(Boolean);
    if (missing.length > 0) {
      throw new ConfigError(
        `refusing to listen on ${host}: it is not a loopback address and ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set. ` +
          'Without both tokens anyone who can reach the port could write telemetry or read the matrix. ' +
          'Set the tokens, or listen on 127.0.0.1.',
      );
    }
    const tokens = [
      ['EXTSCOPE_INGEST_TOKEN', ingestToken],
      ['EXTSCOPE_READ_TOKEN', readToken],
      ...(adminToken === undefined ? [] : [['EXTSCOPE_ADMIN_TOKEN', adminToken] as const]),
    ] as const;
    for (const [name, token] of tokens) {
      const weakness = tokenWeakness(token ?? '');
      if (weakness !== undefined) {
        throw new ConfigError(
          `refusing to listen on ${host}: ${name} ${weakness}. Anyone who can reach the port may try tokens, so a short or ` +
            `repetitive one is soon guessed; use at least ${MIN_TOKEN_LENGTH} random characters (e.g. \`openssl rand -hex 32\`).`,
        );
      }
    }
  }
  checkDbLocation(options.dbPath);
  const delivery = resolveDeliveryConfig(options.delivery);
  // Port 0 is known once the server listens (service.ts checks again then).
  if (port !== 0) refuseOwnAddress(delivery, host, port);
  const synchronous = options.synchronous ?? DEFAULT_SYNCHRONOUS;
  if (synchronous !== 'normal' && synchronous !== 'full') throw new ConfigError(`synchronous must be normal or full (got ${JSON.stringify(synchronous)})`);
  const allowedHosts = options.allowedHosts?.map((name) => name.trim()).filter((name) => name !== '');
  for (const name of allowedHosts ?? []) {
    if (/[\s/@?#,]/.test(name))
      throw new ConfigError(`allowed host ${JSON.stringify(name)} is not a host name or address (a name as in the Host header, without scheme or path)`);
  }
  return {
    host,
    allowedHosts: allowedHosts === undefined || allowedHosts.length === 0 ? undefined : allowedHosts,
    port,
    grpcPort,
    dbPath: options.dbPath,
    ingestToken,
    readToken,
    adminToken,
    logger: options.logger ?? false,
    retention,
    limits,
    synchronous,
    staleAfterMs: positive('staleAfterMs', options.staleAfterMs ?? DEFAULTS.staleAfterMs),
    instanceTtlMs: positive('instanceTtlMs', options.instanceTtlMs ?? DEFAULTS.instanceTtlMs),
    endedTtlMs: positive('endedTtlMs', options.endedTtlMs ?? DEFAULTS.endedTtlMs),
    foldIntervalMs: positive('foldIntervalMs', options.foldIntervalMs ?? DEFAULTS.foldIntervalMs),
    maintenanceIntervalMs: positive('maintenanceIntervalMs', options.maintenanceIntervalMs ?? DEFAULTS.maintenanceIntervalMs),
    examplesPerCell: positive('examplesPerCell', options.examplesPerCell ?? DEFAULTS.examplesPerCell),
    shutdownGraceMs: positive('shutdownGraceMs', options.shutdownGraceMs ?? DEFAULTS.shutdownGraceMs),
    minFreeBytes: positive('minFreeBytes', options.minFreeBytes ?? DEFAULTS.minFreeBytes),
    delivery,
    rulesPath: options.rulesPath === '' ? undefined : options.rulesPath,
    alertIntervalMs: options.alertIntervalMs === undefined ? undefined : positive('alertIntervalMs', options.alertIntervalMs),
    traceUrl: options.traceUrl === undefined || options.traceUrl === '' ? undefined : checkTraceUrlTemplate('EXTSCOPE_TRACE_URL', options.traceUrl),
    clock: options.clock ?? Date.now,
  };
}

export type CollectorVariable = EnvironmentVariable<Partial<CollectorOptions>>;

function number(name: string, value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isFinite(parsed)) throw new ConfigError(`${name} must be a number (got ${JSON.stringify(value)})`);
  return parsed;
}

/** A comma-separated list of host names, as the CLI and the environment give it. */
export function allowedHostsValue(value: string): string[] {
  return value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}

/** A gRPC port as the CLI and the environment give it: a number, or `off`. */
export function grpcPortValue(name: string, value: string): number | null {
  return value.trim().toLowerCase() === 'off' ? null : number(name, value);
}

const retentionVariable = (name: string, key: keyof RetentionConfig, help: string): CollectorVariable => ({
  name,
  help,
  default: DEFAULT_RETENTION[key],
  apply: (options, value) => {
    options.retention = { ...options.retention, [key]: number(name, value) };
  },
});

const limitVariable = (name: string, key: keyof CollectorLimits, help: string): CollectorVariable => ({
  name,
  help,
  default: DEFAULT_LIMITS[key],
  apply: (options, value) => {
    options.limits = { ...options.limits, [key]: number(name, value) };
  },
});

/** Every variable the CLI reads, in the order its help lists them. */
export const ENVIRONMENT: readonly CollectorVariable[] = [
  { name: 'EXTSCOPE_HOST', help: 'Address to listen on (as --host)', default: DEFAULT_HOST, apply: (options, value) => (options.host = value) },
  {
    name: 'EXTSCOPE_ALLOWED_HOSTS',
    help: 'Names accepted in the Host header besides localhost, 127.x and [::1], comma-separated (as --allowed-hosts; beyond loopback, unset: any)',
    apply: (options, value) => (options.allowedHosts = allowedHostsValue(value)),
  },
  { name: 'EXTSCOPE_PORT', help: 'Port (as --port)', default: DEFAULT_PORT, apply: (options, value) => (options.port = number('EXTSCOPE_PORT', value)) },
  {
    name: 'EXTSCOPE_GRPC_PORT',
    help: 'OTLP/gRPC receiver port (as --grpc-port; off = no gRPC receiver)',
    default: DEFAULT_GRPC_PORT,
    apply: (options, value) => (options.grpcPort = grpcPortValue('EXTSCOPE_GRPC_PORT', value)),
  },
  {
    name: 'EXTSCOPE_DB',
    help: 'SQLite database file or postgres:// URL (as --db)',
    default: DEFAULT_DB_PATH,
    apply: (options, value) => (options.dbPath = value),
  },
  { name: 'EXTSCOPE_INGEST_TOKEN', help: 'Bearer token required on /v1/* and on OTLP/gRPC exports', apply: (options, value) => (options.ingestToken = value) },
  { name: 'EXTSCOPE_READ_TOKEN', help: 'Bearer token required on /api/v1/* and /metrics', apply: (options, value) => (options.readToken = value) },
  {
    name: 'EXTSCOPE_ADMIN_TOKEN',
    help: 'Bearer token required on /admin/* (online backup); also read by `extscope db backup`',
    apply: (options, value) => (options.adminToken = value),
  },
  retentionVariable('EXTSCOPE_RETENTION_MINUTE_DAYS', 'minuteDays', 'Keep per-minute rollups this many days'),
  retentionVariable('EXTSCOPE_RETENTION_HOUR_DAYS', 'hourDays', 'Keep hourly and daily rollups this many days'),
  retentionVariable('EXTSCOPE_DEDUP_HOURS', 'dedupHours', 'Remember applied points this long to recognise retries'),
  {
    name: 'EXTSCOPE_SYNCHRONOUS',
    help: 'normal (durable across process crashes) or full (also power loss)',
    default: DEFAULT_SYNCHRONOUS,
    apply: (options, value) => (options.synchronous = value as Synchronous),
  },
  {
    name: 'EXTSCOPE_INSTANCE_TTL_HOURS',
    help: 'Instances not heard from for this long leave the instances list',
    default: DEFAULTS.instanceTtlMs / MS_PER_HOUR,
    apply: (options, value) => (options.instanceTtlMs = number('EXTSCOPE_INSTANCE_TTL_HOURS', value) * MS_PER_HOUR),
  },
  {
    name: 'EXTSCOPE_ENDED_TTL_MINUTES',
    help: 'Ended sessions and instances stay listed this long when asked for (ended=true, the Fleet view\'s "show ended"); the live view drops them at once',
    default: DEFAULTS.endedTtlMs / MS_PER_MINUTE,
    apply: (options, value) => (options.endedTtlMs = number('EXTSCOPE_ENDED_TTL_MINUTES', value) * MS_PER_MINUTE),
  },
  {
    name: 'EXTSCOPE_TRACE_URL',
    help: 'Link from example requests to their traces: a URL with {traceId} (and optionally {spanId}), e.g. http://jaeger:16686/trace/{traceId}',
    apply: (options, value) => (options.traceUrl = value),
  },
  {
    name: 'EXTSCOPE_RULES',
    help: 'Alert rules file, YAML or JSON (as --rules; default: the built-in rules)',
    apply: (options, value) => (options.rulesPath = value),
  },
  limitVariable('EXTSCOPE_MAX_BODY_BYTES', 'maxBodyBytes', 'Largest request body'),
  limitVariable('EXTSCOPE_MAX_DECOMPRESSED_BYTES', 'maxDecompressedBytes', 'Largest body after gunzip'),
  limitVariable('EXTSCOPE_MAX_IDS_PER_INSTANCE_HOUR', 'maxExtensionIdsPerInstanceHour', 'Distinct extension ids one instance may report per hour'),
  limitVariable('EXTSCOPE_MAX_VALUES_PER_DIMENSION', 'maxValuesPerDimension', 'Distinct client names, versions, methods, … kept each (the rest: _OTHER)'),
  limitVariable('EXTSCOPE_MAX_INSTANCES', 'maxInstances', 'Instances (service, instance id) kept (the rest: _OTHER)'),
  limitVariable('EXTSCOPE_MAX_DECOMPRESSING_BYTES', 'maxDecompressingBytes', 'Gunzipped bytes held at once across exports before answering 503'),
  limitVariable('EXTSCOPE_MAX_AUTH_FAILURES', 'maxAuthFailuresPerMinute', 'Failed authentications per client address and minute before answering 429'),
  limitVariable('EXTSCOPE_MAX_IN_FLIGHT', 'maxInFlightExports', 'Exports (arrived in full) processed at once before answering 503'),
  limitVariable(
    'EXTSCOPE_MAX_RECEIVING_BYTES',
    'maxReceivingBytes',
    'Bytes of export bodies still arriving, across connections (a fair share per address), before answering 503',
  ),
  limitVariable('EXTSCOPE_MAX_MATRIX_CELLS', 'maxMatrixCells', 'Rows × extension ids one matrix read may ask for (limit × extensionLimit)'),
  limitVariable('EXTSCOPE_MAX_READ_CELLS', 'maxScannedCells', 'Cell totals one read may scan before it is refused (narrow the range)'),
  limitVariable(
    'EXTSCOPE_MAX_HEAVY_READS',
    'maxHeavyReads',
    'Matrix, trend, time-series and filter-list reads computed at once; a few more wait, the rest get 503',
  ),
  limitVariable('EXTSCOPE_BACKUP_IDLE_MS', 'backupIdleMs', 'Milliseconds an online backup download may make no progress before it is dropped'),
  limitVariable(
    'EXTSCOPE_BACKUP_DEADLINE_MS',
    'backupDeadlineMs',
    'Milliseconds an online backup download may take in all before it is dropped (the next backup may start)',
  ),
  limitVariable('EXTSCOPE_PG_STATEMENT_TIMEOUT_MS', 'pgStatementTimeoutMs', 'PostgreSQL: milliseconds one statement may run (statement_timeout)'),
  limitVariable(
    'EXTSCOPE_PG_LOCK_TIMEOUT_MS',
    'pgLockTimeoutMs',
    'PostgreSQL: milliseconds one statement may wait for a lock (lock_timeout); then 503, or a read without the fold',
  ),
  limitVariable('EXTSCOPE_RECEIVE_TIMEOUT_MS', 'receiveTimeoutMs', 'Milliseconds a request (HTTP body, gRPC message) may take to arrive before it is refused'),
  {
    name: 'EXTSCOPE_LOG_LEVEL',
    help: 'pino level',
    default: DEFAULT_LOG_LEVEL,
    apply: (options, value) => (options.logger = { ...(typeof options.logger === 'object' ? options.logger : {}), level: value }),
  },
  ...DELIVERY_ENVIRONMENT,
];

/** The collector options the environment sets (empty values count as unset). */
export function optionsFromEnvironment(env: NodeJS.ProcessEnv): Partial<CollectorOptions> {
  const options: Partial<CollectorOptions> = { logger: { level: DEFAULT_LOG_LEVEL } };
  for (const variable of ENVIRONMENT) {
    const value = env[variable.name];
    if (value !== undefined && value !== '') variable.apply(options, value);
  }
  return options;
}

/** The environment section of the CLI's help. */
export function environmentHelp(): string {
  const width = Math.max(...ENVIRONMENT.map((variable) => variable.name.length)) + 2;
  return ENVIRONMENT.map(
    (variable) => `  ${variable.name.padEnd(width)}${variable.help}${variable.default === undefined ? '' : ` (default ${variable.default})`}`,
  ).join('\n');
}
