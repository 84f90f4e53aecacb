import type { ExtscopeInstrumentation } from '../instrumentation.js';

/** The agent started by `extscope/register`, reachable from the application through the package API. */
export interface ActiveAgent {
  instrumentation: ExtscopeInstrumentation;
  /** Flushes and stops the SDK the entry started (no-op when the app brought its own); bounded by `deadlineMs`. */
  shutdown(deadlineMs?: number): Promise<void>;
}

// A global symbol, so a second copy of the package (ESM and CJS, or nested installs) finds the same agent.
const KEY = Symbol.for('extscope.activeAgent');

export function setActiveAgent(agent: ActiveAgent): void {
  (globalThis as Record<symbol, unknown>)[KEY] = agent;
}

export function getActiveAgent(): ActiveAgent | undefined {
  return (globalThis as Record<symbol, unknown>)[KEY] as ActiveAgent | undefined;
}
