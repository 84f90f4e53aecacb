#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { ConfigError, type CollectorOptions, DEFAULT_DB_PATH, DEFAULT_HOST, DEFAULT_PORT } from '../collector/config.js';
import { startCollector } from '../collector/server.js';
import { SchemaTooNewError } from '../collector/store/sqlite/migrate.js';

const USAGE = `Usage: extscope <command> [options]

Commands:
  collector   Run the collector: OTLP/HTTP receiver, query API, /metrics, /healthz, /readyz

Run "extscope collector --help" for the collector's options.
`;

const COLLECTOR_USAGE = `Usage: extscope collector [--host HOST] [--port PORT] [--db PATH]

Receives extscope telemetry over OTLP/HTTP (POST /v1/metrics, /v1/traces) and serves the query API
(/api/v1/*), /metrics, /healthz and /readyz on one port.

Options:
  --host HOST   Address to listen on (env EXTSCOPE_HOST, default ${DEFAULT_HOST}).
                Anything but loopback requires both tokens below.
  --port PORT   Port (env EXTSCOPE_PORT, default ${DEFAULT_PORT}, the OTLP/HTTP default; 0 = any free port)
  --db PATH     SQLite database file (env EXTSCOPE_DB, default ${DEFAULT_DB_PATH})
  -h, --help    Show this help

Environment:
  EXTSCOPE_INGEST_TOKEN           Bearer token required on /v1/*
  EXTSCOPE_READ_TOKEN             Bearer token required on /api/v1/* and /metrics
  EXTSCOPE_RETENTION_MINUTE_DAYS  Keep per-minute rollups this many days (default 7)
  EXTSCOPE_RETENTION_HOUR_DAYS    Keep hourly and daily rollups this many days (default 400)
  EXTSCOPE_DEDUP_HOURS            Remember applied points this long to recognise retries (default 6)
  EXTSCOPE_SYNCHRONOUS            normal (default: durable across process crashes) or full (also power loss)
  EXTSCOPE_MAX_BODY_BYTES         Largest request body (default 8388608)
  EXTSCOPE_MAX_DECOMPRESSED_BYTES Largest body after gunzip (default 33554432)
  EXTSCOPE_MAX_IDS_PER_INSTANCE_HOUR  Distinct extension ids one instance may report per hour (default 1024)
  EXTSCOPE_MAX_IN_FLIGHT          Exports processed at once before answering 503 (default 32)
  EXTSCOPE_LOG_LEVEL              pino level (default info)
`;

class UsageError extends Error {}

function numberFrom(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const number = Number(value);
  if (!Number.isFinite(number)) throw new UsageError(`${name} must be a number (got ${JSON.stringify(value)})`);
  return number;
}

function collectorOptions(args: string[], env: NodeJS.ProcessEnv): CollectorOptions | undefined {
  const { values } = parseArgs({
    args,
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      db: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(COLLECTOR_USAGE);
    return undefined;
  }
  const synchronous = env['EXTSCOPE_SYNCHRONOUS'];
  if (synchronous !== undefined && synchronous !== 'normal' && synchronous !== 'full') {
    throw new UsageError(`EXTSCOPE_SYNCHRONOUS must be normal or full (got ${JSON.stringify(synchronous)})`);
  }
  const defined = <T extends object>(object: T): Partial<T> =>
    Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as Partial<T>;
  return {
    host: values.host ?? env['EXTSCOPE_HOST'] ?? DEFAULT_HOST,
    port: numberFrom('--port', values.port ?? env['EXTSCOPE_PORT']) ?? DEFAULT_PORT,
    dbPath: values.db ?? env['EXTSCOPE_DB'] ?? DEFAULT_DB_PATH,
    ingestToken: env['EXTSCOPE_INGEST_TOKEN'],
    readToken: env['EXTSCOPE_READ_TOKEN'],
    logger: { level: env['EXTSCOPE_LOG_LEVEL'] ?? 'info' },
    synchronous: synchronous as 'normal' | 'full' | undefined,
    retention: defined({
      minuteDays: numberFrom('EXTSCOPE_RETENTION_MINUTE_DAYS', env['EXTSCOPE_RETENTION_MINUTE_DAYS']),
      hourDays: numberFrom('EXTSCOPE_RETENTION_HOUR_DAYS', env['EXTSCOPE_RETENTION_HOUR_DAYS']),
      dedupHours: numberFrom('EXTSCOPE_DEDUP_HOURS', env['EXTSCOPE_DEDUP_HOURS']),
    }),
    limits: defined({
      maxBodyBytes: numberFrom('EXTSCOPE_MAX_BODY_BYTES', env['EXTSCOPE_MAX_BODY_BYTES']),
      maxDecompressedBytes: numberFrom('EXTSCOPE_MAX_DECOMPRESSED_BYTES', env['EXTSCOPE_MAX_DECOMPRESSED_BYTES']),
      maxExtensionIdsPerInstanceHour: numberFrom('EXTSCOPE_MAX_IDS_PER_INSTANCE_HOUR', env['EXTSCOPE_MAX_IDS_PER_INSTANCE_HOUR']),
      maxInFlightExports: numberFrom('EXTSCOPE_MAX_IN_FLIGHT', env['EXTSCOPE_MAX_IN_FLIGHT']),
    }),
  };
}

async function runCollector(args: string[]): Promise<number> {
  const options = collectorOptions(args, process.env);
  if (options === undefined) return 0;
  const collector = await startCollector(options);
  collector.app.log.info({ url: collector.url, db: collector.config.dbPath }, `extscope collector listening on ${collector.url}`);
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      collector.app.log.info(`${signal}: draining in-flight exports and closing the database`);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      collector.close().then(resolve, (error: unknown) => {
        collector.app.log.error({ err: error }, 'shutdown failed');
        process.exitCode = 1;
        resolve();
      });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  return process.exitCode === undefined ? 0 : Number(process.exitCode);
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command !== 'collector') {
    process.stderr.write(`extscope: unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
    return 2;
  }
  try {
    return await runCollector(rest);
  } catch (error) {
    const known = error instanceof ConfigError || error instanceof UsageError || error instanceof SchemaTooNewError || (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION';
    if (known) {
      process.stderr.write(`extscope collector: ${(error as Error).message}\n`);
      return 2;
    }
    process.stderr.write(`extscope collector: ${(error as Error).stack ?? String(error)}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
