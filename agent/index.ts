export { ExtscopeInstrumentation, type PatchStatus } from './instrumentation.js';
export type { ExtscopeInstrumentationConfig, ServerIdentity } from './types.js';
export * as contract from '../contract/index.js';
import { getActiveAgent } from './register/active-agent.js';

/**
 * Flushes and stops the telemetry that `extscope/register` started. Resolves within `deadlineMs` (default
 * 1.5 s) even when the collector is unreachable. A no-op when extscope was not preloaded.
 */
export function shutdown(deadlineMs?: number): Promise<void> {
  return getActiveAgent()?.shutdown(deadlineMs) ?? Promise.resolve();
}
