import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import {
  type CollectorOptions,
  DEFAULT_DB_PATH,
  DEFAULT_GRPC_PORT,
  DEFAULT_HOST,
  DEFAULT_PORT,
  allowedHostsValue,
  environmentHelp,
  grpcPortValue,
  optionsFromEnvironment,
} from '../../collector/config.js';
import { ConfigError, SchemaTooNewError, startCollector } from '../../collector/index.js';
import { describeDb } from '../../collector/store/open.js';
import { userError } from './user-errors.js';

const COLLECTOR_USAGE = `Usage: extscope collector [--host HOST] [--allowed-hosts NAMES] [--port PORT] [--grpc-port PORT|off] [--db PATH] [--rules FILE]
                          [--log-format pretty|json]

Receives extscope telemetry over OTLP/HTTP (POST /v1/metrics, /v1/traces) and serves the query API
(/api/v1/*), /metrics, /healthz and /readyz on one port; receives OTLP/gRPC on another.

Options:
  --host HOST   Address to listen on (env EXTSCOPE_HOST, default ${DEFAULT_HOST}).
                Anything but loopback requires both tokens below.
  --allowed-hosts NAME[,NAME…]
                Names accepted in the Host header besides localhost, 127.x and [::1] (env
                EXTSCOPE_ALLOWED_HOSTS): what a reverse proxy passes on, or the collector's own names beyond
                loopback (unset there: any). Other Host values are refused 421, against DNS rebinding.
  --port PORT   Port (env EXTSCOPE_PORT, default ${DEFAULT_PORT}, the OTLP/HTTP default; 0 = any free port)
  --grpc-port PORT
                OTLP/gRPC port on the same host (env EXTSCOPE_GRPC_PORT, default ${DEFAULT_GRPC_PORT}, the OTLP/gRPC
                default; 0 = any free port; off = no gRPC receiver)
  --db PATH|URL SQLite database file, or postgres://… for several replicas on PostgreSQL
                (env EXTSCOPE_DB, default ${DEFAULT_DB_PATH}; see docs/postgresql.md)
  --rules FILE  Alert rules, YAML or JSON (env EXTSCOPE_RULES; default: the built-in rules).
                Re-read on SIGHUP; an invalid file keeps the rules in force.
  --log-format pretty|json
                Log lines for people or for log shippers (env EXTSCOPE_LOG_FORMAT; default: pretty when
                stdout is a terminal, JSON otherwise)
  -h, --help    Show this help

Environment (flags win):
${environmentHelp()}
`;

/** pino's own convention: pino-pretty for people, one JSON object per line for machines. */
const PRETTY_TRANSPORT = {
  // Resolved here: pino would resolve a bare name from the caller's folder, which an npx install does not share.
  target: createRequire(import.meta.url).resolve('pino-pretty'),
  options: { translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname', singleLine: true },
};

function logFormat(value: string | undefined): 'pretty' | 'json' {
  if (value === undefined || value === '') return process.stdout.isTTY === true ? 'pretty' : 'json';
  if (value === 'pretty' || value === 'json') return value;
  throw new ConfigError(`--log-format must be pretty or json (got ${JSON.stringify(value)})`);
}

async function serveCollector(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      host: { type: 'string' },
      'allowed-hosts': { type: 'string' },
      port: { type: 'string' },
      'grpc-port': { type: 'string' },
      db: { type: 'string' },
      rules: { type: 'string' },
      'log-format': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(COLLECTOR_USAGE);
    return 0;
  }
  const fromFlags: Partial<CollectorOptions> = {};
  if (values.host !== undefined) fromFlags.host = values.host;
  if (values['allowed-hosts'] !== undefined) fromFlags.allowedHosts = allowedHostsValue(values['allowed-hosts']);
  if (values.port !== undefined) {
    fromFlags.port = Number(values.port);
    if (values.port.trim() === '' || !Number.isFinite(fromFlags.port)) throw new ConfigError(`--port must be a number (got ${JSON.stringify(values.port)})`);
  }
  if (values['grpc-port'] !== undefined) fromFlags.grpcPort = grpcPortValue('--grpc-port', values['grpc-port']);
  if (values.db !== undefined) fromFlags.dbPath = values.db;
  if (values.rules !== undefined) fromFlags.rulesPath = values.rules;
  const options: CollectorOptions = { dbPath: DEFAULT_DB_PATH, ...optionsFromEnvironment(process.env), ...fromFlags };
  const format = logFormat(values['log-format'] ?? process.env['EXTSCOPE_LOG_FORMAT']);
  if (format === 'pretty' && typeof options.logger === 'object') options.logger = { ...options.logger, transport: PRETTY_TRANSPORT };
  const collector = await startCollector(options);
  const grpc = collector.grpcAddress === undefined ? '' : ` (OTLP/gRPC on ${collector.grpcAddress})`;
  collector.app.log.info(
    { url: collector.url, grpc: collector.grpcAddress ?? null, db: describeDb(collector.config.dbPath) },
    `extscope collector listening on ${collector.url}${grpc}`,
  );

  // SIGHUP re-reads the rules file; an invalid one is logged and the rules in force stay.
  const reload = (): void => {
    collector.alerting.reload().catch((error: unknown) => collector.app.log.error(`rules reload failed: ${(error as Error).message}`));
  };
  process.on('SIGHUP', reload);
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      collector.app.log.info(`${signal}: draining in-flight exports and closing the database`);
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      process.off('SIGHUP', reload);
      collector.close().then(resolve, (error: unknown) => {
        collector.app.log.error({ err: error }, 'shutdown failed');
        process.exitCode = 1;
        resolve();
      });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    // The address to open, plainly, whatever the log format (stdout stays log lines only); once a signal stops
    // the collector cleanly, so that whoever reads this line may send one.
    const grpcTarget = collector.grpcAddress === undefined ? '' : ` or ${collector.grpcAddress} (OTLP/gRPC)`;
    process.stderr.write(`extscope collector: open ${collector.url}/ in a browser; agents export to ${collector.url} (OTLP/HTTP)${grpcTarget}\n`);
  });
  return process.exitCode === undefined ? 0 : Number(process.exitCode);
}

/** `extscope collector [options]`: runs until SIGINT or SIGTERM. */
export async function runCollector(args: string[]): Promise<number> {
  try {
    return await serveCollector(args);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof SchemaTooNewError) {
      process.stderr.write(`extscope collector: ${error.message}\n`);
      return 2;
    }
    // An unknown option, or one without its value: node's message is its first sentence.
    if (String((error as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS_')) {
      process.stderr.write(`extscope collector: ${(error as Error).message.split('. ')[0]!} (extscope collector --help lists the options)\n`);
      return 2;
    }
    const fixable = userError(error);
    if (fixable !== undefined) {
      process.stderr.write(`extscope collector: ${fixable.message}\n`);
      return fixable.exitCode;
    }
    process.stderr.write(`extscope collector: ${(error as Error).stack ?? String(error)}\n`);
    return 1;
  }
}
