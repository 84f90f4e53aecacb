/**
 * Zero-code entry: `node --import @extscope/agent/register server.js` (ESM or CJS servers alike).
 *
 * Installs the module hooks before the application loads, and starts an OpenTelemetry SDK at the first
 * server `connect` unless the application registered its own providers by then (it then uses those).
 * It never writes to stdout; diagnostics go to stderr.
 */
import { register as registerLoader } from 'node:module';
import { metrics, trace } from '@opentelemetry/api';
import { getNumberFromEnv, getStringListFromEnv } from '@opentelemetry/core';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { setActiveAgent } from './active-agent.js';
import { ExportHealth } from './export-health.js';
import { ExtscopeInstrumentation } from '../instrumentation.js';
import type { FinalExport } from './final-export.js';
import { type AgentSdk, appHasOpenTelemetry, finalExportWithoutSdk, installStderrDiagLogger, startAgentSdk } from './sdk.js';
import { EXIT_FLUSH_DEADLINE_MS, flushOnExit, flushProviders, onceAtATime } from '../exit-flush.js';
import { selfCheckMessage, unrecordedTrafficMessage } from './self-check.js';
import type { Transport } from '../../contract/index.js';
import type { ServerIdentity } from '../types.js';

/** A boolean environment variable: `true`/`false` (any case); anything else is the default. */
function envFlag(name: string, fallback: boolean): boolean {
  const value = process.env[name]?.trim().toLowerCase();
  if (value === 'true') return true;
  if (value === 'false') return false;
  return fallback;
}

const SELF_CHECK_DELAY_MS = getNumberFromEnv('EXTSCOPE_SELF_CHECK_MS') ?? 5000;

const MCP_MODULE_URL = /[\\/]node_modules[\\/]@modelcontextprotocol[\\/](?:server|sdk)[\\/]/;

function start(): void {
  installStderrDiagLogger();
  // Only the MCP server packages go through the ESM hook: every other module loads exactly as without us.
  registerLoader('import-in-the-middle/hook.mjs', import.meta.url, { data: { include: [MCP_MODULE_URL] } });

  let sdk: AgentSdk | undefined;
  let adopted = false;
  const tracesOff = getStringListFromEnv('OTEL_TRACES_EXPORTER')?.includes('none') ?? false;
  const spansOn = !tracesOff && envFlag('EXTSCOPE_SPANS', true);
  const flushing = envFlag('EXTSCOPE_FLUSH_ON_EXIT', true);
  let exitHooked = false;
  let orphanExport: FinalExport | undefined;
  const snapshot = () => instrumentation.snapshotMetrics();
  /** The synchronous last export (see flushOnExit); never throws. */
  const lastExport = (): void => {
    try {
      if (adopted) return;
      instrumentation.markProcessEnding();
      if (sdk !== undefined) sdk.finalExport?.run(EXIT_FLUSH_DEADLINE_MS);
      // No server was identified and no SDK started, yet requests were counted (a version probe's process).
      else (orphanExport ??= finalExportWithoutSdk(snapshot))?.run(EXIT_FLUSH_DEADLINE_MS);
    } catch {
      // Nothing may disturb the exit.
    }
  };
  const hookExit = (): void => {
    if (exitHooked || !flushing) return;
    exitHooked = true;
    flushOnExit(
      onceAtATime(() => {
        // What leaves now is the process's last export: it says so, and the collector ends the instance at once.
        instrumentation.markProcessEnding();
        return sdk?.shutdown() ?? (adopted ? flushProviders() : Promise.resolve());
      }),
      lastExport,
    );
  };
  const onFirstServer = (server: ServerIdentity, transport: Transport | undefined): void => {
    if (appHasOpenTelemetry()) {
      instrumentation.setMeterProvider(metrics.getMeterProvider());
      instrumentation.setTracerProvider(trace.getTracerProvider());
      // The app's SDK is the app's to shut down; what extscope recorded is flushed through it at exit.
      adopted = true;
      hookExit();
      return;
    }
    const health = new ExportHealth(
      (line) => process.stderr.write(`${line}\n`),
      (signal) => instrumentation.countAgentError(`export_${signal}`),
    );
    sdk = startAgentSdk(server, { spans: spansOn, snapshot, transport }, health);
    if (sdk.meterProvider !== undefined) instrumentation.setMeterProvider(sdk.meterProvider);
    if (sdk.tracerProvider !== undefined) instrumentation.setTracerProvider(sdk.tracerProvider);
    hookExit();
  };
  const wireFallback = envFlag('EXTSCOPE_WIRE_FALLBACK', true);
  const onMcpTraffic = (side: 'stdio' | 'http'): void => {
    // Requests arrive: what they count must leave even if the process ends before a server is identified.
    hookExit();
    const timer = setTimeout(() => {
      const message = unrecordedTrafficMessage(side, instrumentation.recordedRequests, wireFallback);
      if (message !== undefined) process.stderr.write(`${message}\n`);
    }, SELF_CHECK_DELAY_MS);
    timer.unref();
  };
  const instrumentation = new ExtscopeInstrumentation({
    spans: spansOn,
    captureSettings: envFlag('EXTSCOPE_CAPTURE_SETTINGS', false),
    wireFallback: wireFallback ? true : 'watch',
    onMcpTraffic,
    onFirstServer,
    // This entry flushes at exit itself (and adds the synchronous last export): see hookExit.
    flushOnExit: false,
  });
  registerInstrumentations({ instrumentations: [instrumentation] });
  setActiveAgent({
    instrumentation,
    shutdown: (deadlineMs) => sdk?.shutdown(deadlineMs) ?? (adopted ? flushProviders({}, deadlineMs) : Promise.resolve()),
  });

  const timer = setTimeout(() => {
    const message = selfCheckMessage(instrumentation.status);
    if (message !== undefined) process.stderr.write(`${message}\n`);
  }, SELF_CHECK_DELAY_MS);
  timer.unref();
}

if (!envFlag('OTEL_SDK_DISABLED', false)) start();
