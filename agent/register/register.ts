/**
 * Zero-code entry: `node --import extscope/register server.js` (ESM or CJS servers alike).
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
import { type AgentSdk, appHasOpenTelemetry, flushAdoptedProviders, installStderrDiagLogger, startAgentSdk } from './sdk.js';
import { selfCheckMessage, unrecordedTrafficMessage } from './self-check.js';
import type { ServerIdentity } from '../types.js';

/** A boolean environment variable: `true`/`false` (any case); anything else is the default. */
function envFlag(name: string, fallback: boolean): boolean {
  const value = process.env[name]?.trim().toLowerCase();
  if (value === 'true') return true;
  if (value === 'false') return false;
  return fallback;
}

const SELF_CHECK_DELAY_MS = getNumberFromEnv('EXTSCOPE_SELF_CHECK_MS') ?? 5000;

/**
 * Flushes at exit (`end`: the agent's own SDK is shut down, the app's adopted providers only flushed).
 */
function flushOnExit(end: () => Promise<void>): void {
  process.once('beforeExit', () => void end());
  // A signal normally ends the process at once. When nobody else listens, flush (bounded), then re-raise it
  // so the process still dies of that signal; when the app listens, it decides, and we flush alongside.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    const onSignal = (): void => {
      const alone = process.listenerCount(signal) === 1;
      void end().then(() => {
        process.removeListener(signal, onSignal);
        if (alone) process.kill(process.pid, signal);
      });
    };
    process.on(signal, onSignal);
  }
}

/** `flush`, but a call while one runs joins it (a signal during the `beforeExit` flush, say). */
function onceAtATime(flush: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => {
    running ??= flush().finally(() => {
      running = undefined;
    });
    return running;
  };
}

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
  const onFirstServer = (server: ServerIdentity): void => {
    if (appHasOpenTelemetry()) {
      instrumentation.setMeterProvider(metrics.getMeterProvider());
      instrumentation.setTracerProvider(trace.getTracerProvider());
      // The app's SDK is the app's to shut down; what extscope recorded is flushed through it at exit.
      adopted = true;
      if (flushing) flushOnExit(onceAtATime(() => flushAdoptedProviders()));
      return;
    }
    const health = new ExportHealth(
      (line) => process.stderr.write(`${line}\n`),
      (signal) => instrumentation.countAgentError(`export_${signal}`),
    );
    sdk = startAgentSdk(server, { spans: spansOn }, health);
    if (sdk.meterProvider !== undefined) instrumentation.setMeterProvider(sdk.meterProvider);
    if (sdk.tracerProvider !== undefined) instrumentation.setTracerProvider(sdk.tracerProvider);
    const agentSdk = sdk;
    if (flushing) flushOnExit(() => agentSdk.shutdown());
  };
  const wireFallback = envFlag('EXTSCOPE_WIRE_FALLBACK', true);
  const onMcpTraffic = (side: 'stdio' | 'http'): void => {
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
  });
  registerInstrumentations({ instrumentations: [instrumentation] });
  setActiveAgent({
    instrumentation,
    shutdown: (deadlineMs) => sdk?.shutdown(deadlineMs) ?? (adopted ? flushAdoptedProviders(deadlineMs) : Promise.resolve()),
  });

  const timer = setTimeout(() => {
    const message = selfCheckMessage(instrumentation.status);
    if (message !== undefined) process.stderr.write(`${message}\n`);
  }, SELF_CHECK_DELAY_MS);
  timer.unref();
}

if (!envFlag('OTEL_SDK_DISABLED', false)) start();
