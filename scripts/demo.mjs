#!/usr/bin/env node
// `npm run demo`: the collector and a small, real fleet in one command. Four MCP servers run with
// `node --import @extscope/agent/register` (service "shop": two v2 instances advertising different sets; service "docs":
// a legacy v1 server and a v2 CommonJS one), and demo/fleet.mjs runs real SDK clients against them. Prints the
// dashboard's URL and a progress line; Ctrl-C stops everything (each child runs in its own process group, which is
// ended as a whole).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const USAGE = `Usage: npm run demo [-- --port PORT] [--grpc-port PORT|off] [--db PATH] [--duration SECONDS]
       npm run demo -- --collector URL [--dashboard-url URL]

  --port PORT            the collector's OTLP/HTTP, API and dashboard port (env EXTSCOPE_PORT, default 4318;
                         0 = any free port)
  --grpc-port PORT|off   the collector's OTLP/gRPC port (env EXTSCOPE_GRPC_PORT, default 4317, or any free port
                         when --port is 0, as the collector decides; 0 = any free port; off = none). The MCP
                         servers take free ports of their own: with both moved, two demos run side by side.
  --db PATH              keep the database there (default: a temporary file, removed at the end)
  --collector URL        send the fleet's telemetry to this running collector instead of starting one
                         (EXTSCOPE_INGEST_TOKEN and EXTSCOPE_READ_TOKEN are used when set)
  --dashboard-url URL    the address to print for the dashboard (default: the collector's)
  --duration SECONDS     stop by itself after this long (default: run until Ctrl-C)
`;

let flags;
try {
  ({ values: flags } = parseArgs({
    options: {
      port: { type: 'string', default: process.env.EXTSCOPE_PORT ?? '4318' },
      'grpc-port': { type: 'string' },
      db: { type: 'string' },
      collector: { type: 'string' },
      'dashboard-url': { type: 'string' },
      duration: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (error) {
  // An unknown option or a missing value: one line, with where the options are listed.
  process.stderr.write(`demo: ${error.message.split('\n')[0]} (npm run demo -- --help lists the options)\n`);
  process.exit(2);
}
if (flags.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}
const CLI = join(ROOT, 'dist', 'bin', 'extscope.js');
const AGENT = join(ROOT, 'agent', 'dist', 'agent', 'register', 'register.js');
if ((flags.collector === undefined && !existsSync(CLI)) || !existsSync(join(ROOT, 'dashboard', 'dist', 'index.html')) || !existsSync(AGENT)) {
  process.stderr.write('demo: the build is missing; run `npm run build` (npm install does it) first\n');
  process.exit(1);
}

const say = (line) => process.stdout.write(`${line}\n`);
const children = [];
let stopping = false;

/** Preloaded into every child: it stops itself when this process is gone (see there). */
const PARENT_WATCH = pathToFileURL(join(ROOT, 'demo', 'parent-watch.mjs')).href;

/**
 * Starts a child in a process group of its own, so that stopping it ends everything it started. Its fd 3 is a pipe
 * whose other end only this process holds: if the demo is killed outright, the child sees the pipe close and stops.
 */
function start(name, args, env) {
  const child = spawn(process.execPath, ['--import', PARENT_WATCH, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
  const entry = { name, child, stderr: '', exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))) };
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    entry.stderr = (entry.stderr + chunk).slice(-4000);
    for (const line of chunk.split('\n')) if (line.trim() !== '') process.stderr.write(`[${name}] ${line}\n`);
  });
  void entry.exited.then(({ code, signal }) => {
    if (!stopping) {
      process.stderr.write(`demo: ${name} exited unexpectedly (${signal ?? code})\n`);
      void shutdown(1);
    }
  });
  children.push(entry);
  return entry;
}

/** Resolves with the first stdout line `match` accepts (bounded by `timeoutMs`). */
function firstLine(entry, match, timeoutMs = 30_000) {
  return new Promise((resolve, reject) => {
    let pending = '';
    const timer = setTimeout(() => reject(new Error(`${entry.name} did not start within ${timeoutMs / 1000} s: ${entry.stderr}`)), timeoutMs);
    const onData = (chunk) => {
      pending += chunk;
      let newline;
      while ((newline = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        const found = match(line);
        if (found !== undefined) {
          clearTimeout(timer);
          resolve(found);
          return;
        }
      }
    };
    entry.child.stdout.setEncoding('utf8');
    entry.child.stdout.on('data', onData);
    void entry.exited.then(() => reject(new Error(`${entry.name} exited before it started: ${entry.stderr}`)));
  });
}

function signalGroup(entry, signal) {
  try {
    process.kill(-entry.child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

/** SIGTERM, then SIGKILL to the whole group if it has not exited within `graceMs`. */
async function stopGroup(entry, graceMs) {
  signalGroup(entry, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(entry, 'SIGKILL'), graceMs);
  await entry.exited;
  clearTimeout(timer);
  // Anything the child left behind in its group goes too.
  signalGroup(entry, 'SIGKILL');
}

let tempDir;
let progressTimer;
let shutdownPromise;
function shutdown(code) {
  shutdownPromise ??= (async () => {
    stopping = true;
    clearInterval(progressTimer);
    const byRole = (role) => children.filter((entry) => entry.role === role);
    say(`\nStopping the clients, the servers (they flush their telemetry)${byRole('collector').length > 0 ? ', then the collector' : ''}…`);
    await Promise.all(byRole('clients').map((entry) => stopGroup(entry, 5000)));
    await Promise.all(byRole('server').map((entry) => stopGroup(entry, 5000)));
    await Promise.all(byRole('collector').map((entry) => stopGroup(entry, 15_000)));
    if (tempDir !== undefined) await rm(tempDir, { recursive: true, force: true });
    say('Demo stopped.');
    process.exit(code);
  })();
  return shutdownPromise;
}
process.on('SIGINT', () => {
  // A second Ctrl-C does not wait any longer.
  if (stopping) for (const entry of children) signalGroup(entry, 'SIGKILL');
  void shutdown(0);
});
process.on('SIGTERM', () => void shutdown(0));

const readToken = process.env.EXTSCOPE_READ_TOKEN || undefined;
async function getJson(url) {
  const response = await fetch(url, { headers: readToken === undefined ? {} : { authorization: `Bearer ${readToken}` } });
  if (!response.ok) return undefined;
  return response.json();
}

/** The demo's own collector, on a temporary database unless --db says otherwise; resolves with its URL. */
async function startCollector() {
  let dbPath = flags.db;
  if (dbPath === undefined) {
    tempDir = await mkdtemp(join(tmpdir(), 'extscope-demo-'));
    dbPath = join(tempDir, 'demo.db');
  }
  // Without --grpc-port the collector applies its own default (EXTSCOPE_GRPC_PORT, else 4317, or any free port
  // when the HTTP port is 0), so two demos on free ports never both take 4317.
  const grpcPort = flags['grpc-port'] === undefined ? [] : ['--grpc-port', flags['grpc-port']];
  const collector = start('collector', [CLI, 'collector', '--host', '127.0.0.1', '--port', flags.port, ...grpcPort, '--db', dbPath], {
    EXTSCOPE_LOG_LEVEL: 'info',
    // The demo's alert rules (a short `for`, so a drift alert fires within a minute).
    EXTSCOPE_RULES: join(ROOT, 'demo', 'rules.yml'),
  });
  collector.role = 'collector';
  const url = await firstLine(collector, (line) => /listening on (http:\/\/[^\s"]+)/.exec(line)?.[1]);
  // From here on only the collector's warnings and errors are shown.
  collector.child.stdout.on('data', (chunk) => {
    for (const line of chunk.split('\n')) {
      try {
        const entry = JSON.parse(line);
        if (entry.level >= 40) process.stderr.write(`[collector] ${entry.msg}\n`);
      } catch {
        // Not a log line.
      }
    }
  });
  say(`extscope demo: collector on ${url}, database ${dbPath}`);
  return url;
}

async function main() {
  let url = flags.collector?.replace(/\/+$/, '');
  if (url === undefined) url = await startCollector();
  else say(`extscope demo: sending to the collector at ${url}`);
  const dashboard = (flags['dashboard-url'] ?? url).replace(/\/+$/, '');
  const ingestToken = process.env.EXTSCOPE_INGEST_TOKEN || undefined;

  const agent = (service, instance, extra = {}) => ({
    OTEL_SERVICE_NAME: service,
    OTEL_RESOURCE_ATTRIBUTES: `service.instance.id=${instance},deployment.environment=demo`,
    OTEL_EXPORTER_OTLP_ENDPOINT: url,
    // Every 2 s instead of every minute, so the dashboard fills at once.
    OTEL_METRIC_EXPORT_INTERVAL: '2000',
    OTEL_BSP_SCHEDULE_DELAY: '500',
    ...(ingestToken === undefined || process.env.OTEL_EXPORTER_OTLP_HEADERS ? {} : { OTEL_EXPORTER_OTLP_HEADERS: `Authorization=Bearer%20${ingestToken}` }),
    ...extra,
  });
  const servers = [
    { key: 'shopA', name: 'shop-a', script: 'demo/servers/shop.mjs', env: agent('shop', 'shop-a') },
    // The same service, but this instance no longer advertises com.example/search: the fleet view shows the skew.
    {
      key: 'shopB',
      name: 'shop-b',
      script: 'demo/servers/shop.mjs',
      env: agent('shop', 'shop-b', { DEMO_EXTENSIONS: JSON.stringify({ 'io.modelcontextprotocol/tasks': {} }) }),
    },
    { key: 'docsLegacy', name: 'docs-legacy', script: 'demo/servers/docs-legacy.mjs', env: agent('docs', 'docs-legacy') },
    { key: 'docs', name: 'docs-cjs', script: 'demo/servers/docs.cjs', env: agent('docs', 'docs-cjs') },
  ];
  const targets = {};
  await Promise.all(
    servers.map(async (server) => {
      const entry = start(server.name, ['--import', '@extscope/agent/register', server.script], server.env);
      entry.role = 'server';
      const port = await firstLine(entry, (line) => {
        try {
          return JSON.parse(line).port;
        } catch {
          return undefined;
        }
      });
      targets[server.key] = `http://127.0.0.1:${port}`;
    }),
  );
  say(`  servers: shop-a, shop-b (service shop, v2 ESM), docs-legacy (service docs, v1 SDK), docs-cjs (service docs, v2 CommonJS)`);
  const clients = start('clients', ['demo/fleet.mjs'], { DEMO_TARGETS: JSON.stringify(targets) });
  clients.role = 'clients';
  say('  clients: acme-desktop 1.4.0 (1.5.0 follows), orbit-cli 0.9.2, notes-app 3.0.0 and 2.7.1, ledger-bot 0.4.0, and one without client info');
  say('');
  say(`Open ${dashboard}/  (fleet: ${dashboard}/?view=fleet, trends: ${dashboard}/?view=trends, what changed: ${dashboard}/?view=changes&range=15m)`);
  say('Ctrl-C stops the demo.\n');

  const started = Date.now();
  let announced = false;
  const progress = async () => {
    const [matrix, instances, alerts] = await Promise.all([
      getJson(`${url}/api/v1/matrix`),
      getJson(`${url}/api/v1/instances`),
      getJson(`${url}/api/v1/alerts`),
    ]).catch(() => []);
    if (stopping || matrix === undefined) return;
    const requests = matrix.rows.reduce((sum, row) => sum + row.requests, 0);
    const live = instances?.instances ?? [];
    const differing = live.filter((instance) => instance.differs).length;
    const firing = Array.isArray(alerts?.alerts) ? alerts.alerts.filter((alert) => alert.state === 'firing').length : undefined;
    const parts = [
      `${Math.round((Date.now() - started) / 1000)} s`,
      `matrix: ${matrix.rows.length} clients × ${matrix.extensions.length} extensions, ${requests} requests`,
      `fleet: ${live.length} instances, ${differing} advertising a set other than their service's`,
    ];
    if (firing !== undefined) parts.push(`alerts firing: ${firing}`);
    say(parts.join(' · '));
    if (!announced && matrix.rows.length > 0 && live.length >= servers.length) {
      announced = true;
      say(`Every view has data now: ${dashboard}/`);
    }
  };
  progressTimer = setInterval(() => void progress(), 5000);
  if (flags.duration !== undefined) setTimeout(() => void shutdown(0), Number(flags.duration) * 1000).unref();
}

main().catch((error) => {
  process.stderr.write(`demo: ${error.message}\n`);
  void shutdown(1);
});
