import type { ExtscopeInstrumentation } from '../instrumentation.js';

/** The agent started by `@extscope/agent/register`, reachable from the application through the package API. */
export interface ActiveAgent {
  instrumentation: ExtscopeInstrumentation;
  /** Flushes and stops the SDK the entry started (only flushes the app's own providers when those were adopted); bounded by `deadlineMs`. */
  shutdown(deadlineMs?: number): Promise<void>;
}

// A global symbol, so a second copy of the package (ESM and CJS, or nested installs) finds the same agent.
const KEY = Symbol.for('extscope.activeAgent');

export function setActiveAgent(agent: ActiveAgent): void {
  (globalThis as Record<symbol, unknown>)[KEY] = agent;
}

function getActiveAgent(): ActiveAgent | undefined {
  return (globalThis as Record<symbol, unknown>)[KEY] as ActiveAgent | undefined;
}

/**
 * Flushes and stops the telemetry that `@extscope/agent/register` started. Resolves within `deadlineMs` (default
 * 1.5 s) even when the collector is unreachable. A no-op when extscope was not preloaded.
 */
export function shutdown(deadlineMs?: number): Promise<void> {
  return getActiveAgent()?.shutdown(deadlineMs) ?? Promise.resolve();
}
