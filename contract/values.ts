/** The closed value sets of the contract, and the two buckets that stand for values that cannot be named. */

/** `legacy`: 2025 era, capabilities from `initialize`. `modern`: 2026-07-28+, a per-request envelope. */
export const ERA = { legacy: 'legacy', modern: 'modern' } as const;
export type Era = (typeof ERA)[keyof typeof ERA];

/** Values of `extscope.server.transport`. */
export const TRANSPORT = { stdio: 'stdio', http: 'http' } as const;
export type Transport = (typeof TRANSPORT)[keyof typeof TRANSPORT];

/**
 * A peer's declaration for one request. `unknown`: no capabilities were received; `none`: received, no
 * extension; `declared`: at least one extension key. Never collapsed into two states.
 */
export const DECLARATION = { unknown: 'unknown', none: 'none', declared: 'declared' } as const;
export type Declaration = (typeof DECLARATION)[keyof typeof DECLARATION];
export const DECLARATIONS: readonly Declaration[] = [DECLARATION.unknown, DECLARATION.none, DECLARATION.declared];

/**
 * Outcome classes. A result's own `resultType` (e.g. `task`) is used as-is when it is none of these; `error`
 * carries the JSON-RPC code in `rpc.response.status_code`.
 */
export const OUTCOME = {
  complete: 'complete',
  inputRequired: 'input_required',
  task: 'task',
  toolError: 'tool_error',
  error: 'error',
  cancelled: 'cancelled',
} as const;

/** The JSON-RPC error a server answers when the client lacks a capability it requires. */
export const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;

/** The single bucket every id failing the identifier grammar or the length cap is counted in. */
export const INVALID_EXTENSION_ID = '_invalid';
/** What an attribute value becomes once its cardinality cap is reached (after OpenTelemetry's `_OTHER`). */
export const OVERFLOW_VALUE = '_OTHER';

/** Why the agent did not record an extension id (`extscope.agent.reason`). */
export const REJECTED_ID_REASON = { invalid: 'invalid', tooMany: 'too_many' } as const;
