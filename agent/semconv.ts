/**
 * Every attribute and metric name extscope emits, in one place.
 *
 * OpenTelemetry names come first (the MCP semantic conventions, JSON-RPC, error); extscope's own names live
 * under `extscope.` only where no convention exists. The collector reads these same constants, so this file
 * is the telemetry contract that other-language servers can implement (see README, "Telemetry contract").
 */

// --- OpenTelemetry semantic conventions (MCP, JSON-RPC, general) ---
export const ATTR_MCP_METHOD_NAME = 'mcp.method.name';
export const ATTR_MCP_PROTOCOL_VERSION = 'mcp.protocol.version';
export const ATTR_MCP_SESSION_ID = 'mcp.session.id';
export const ATTR_MCP_RESOURCE_URI = 'mcp.resource.uri';
export const ATTR_JSONRPC_REQUEST_ID = 'jsonrpc.request.id';
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
export const ATTR_GEN_AI_PROMPT_NAME = 'gen_ai.prompt.name';
export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const ATTR_ERROR_TYPE = 'error.type';
export const ATTR_RPC_RESPONSE_STATUS_CODE = 'rpc.response.status_code';
export const ATTR_SERVICE_NAME = 'service.name';
export const ATTR_SERVICE_VERSION = 'service.version';
export const ATTR_SERVICE_INSTANCE_ID = 'service.instance.id';
export const ATTR_HOST_NAME = 'host.name';

// --- extscope: who is talking ---
/** `serverInfo.name` / `.version` of the MCP server object (resource and metric attribute). */
export const ATTR_SERVER_NAME = 'extscope.server.name';
export const ATTR_SERVER_VERSION = 'extscope.server.version';
/** `clientInfo` name / version as the client declared it (self-reported, not an identity). */
export const ATTR_CLIENT_NAME = 'extscope.client.name';
export const ATTR_CLIENT_VERSION = 'extscope.client.version';
/** `legacy` (2025-era: capabilities from `initialize`) or `modern` (2026-07-28+: per-request envelope). */
export const ATTR_ERA = 'extscope.era';

// --- extscope: what was declared and negotiated ---
/** `unknown` | `none` | `declared`: see DESIGN.md §1. */
export const ATTR_CLIENT_DECLARATION = 'extscope.client.declaration';
/** Same three states for the server side; `unknown` only for answers given before any server instance. */
export const ATTR_SERVER_DECLARATION = 'extscope.server.declaration';
/** Outcome class of the request; see {@link OUTCOME}. */
export const ATTR_OUTCOME = 'extscope.outcome';

// Span attributes (string arrays; fingerprint arrays are index-aligned with their id arrays).
export const ATTR_CLIENT_EXTENSIONS = 'extscope.client.extensions';
export const ATTR_CLIENT_EXTENSION_FINGERPRINTS = 'extscope.client.extension.fingerprints';
export const ATTR_CLIENT_EXTENSION_SETTINGS = 'extscope.client.extension.settings';
export const ATTR_SERVER_EXTENSIONS = 'extscope.server.extensions';
export const ATTR_SERVER_EXTENSION_FINGERPRINTS = 'extscope.server.extension.fingerprints';
export const ATTR_NEGOTIATED_EXTENSIONS = 'extscope.negotiated.extensions';
export const ATTR_REQUIRED_EXTENSIONS = 'extscope.required.extensions';
export const ATTR_INVALID_EXTENSION_COUNT = 'extscope.extensions.invalid_count';
export const ATTR_DROPPED_EXTENSION_COUNT = 'extscope.extensions.dropped_count';

// Per-extension metric attributes.
export const ATTR_EXTENSION_ID = 'extscope.extension.id';
export const ATTR_EXTENSION_CLIENT_DECLARED = 'extscope.extension.client_declared';
export const ATTR_EXTENSION_SERVER_DECLARED = 'extscope.extension.server_declared';
export const ATTR_EXTENSION_NEGOTIATED = 'extscope.extension.negotiated';
/** True when a `-32021` answer named this id as a required client capability. */
export const ATTR_EXTENSION_REQUIRED = 'extscope.extension.required';
export const ATTR_EXTENSION_FINGERPRINT = 'extscope.extension.fingerprint';

// Agent self-observation attributes.
export const ATTR_AGENT_STAGE = 'extscope.agent.stage';
export const ATTR_AGENT_REASON = 'extscope.agent.reason';
export const ATTR_AGENT_ATTRIBUTE = 'extscope.agent.attribute';

// --- Metrics ---
/** Monotonic sum, one per answered (or cancelled) request. */
export const METRIC_REQUESTS = 'extscope.requests';
/** Monotonic sum, one per request per extension id that either side declared (or a -32021 named). */
export const METRIC_EXTENSION_REQUESTS = 'extscope.extension.requests';
/** Gauge: 1 per extension id (and settings fingerprint) a server instance advertises. */
export const METRIC_SERVER_EXTENSION_ADVERTISED = 'extscope.server.extension.advertised';
/** Gauge: how many extensions a server advertises (0 included, so idle and extension-less servers report). */
export const METRIC_SERVER_EXTENSIONS = 'extscope.server.extensions';
/** Counter: extension ids not recorded, by reason (`invalid`, `too_many`). */
export const METRIC_AGENT_IDS_REJECTED = 'extscope.agent.extension_ids.rejected';
/** Counter: attribute values folded into {@link OVERFLOW_VALUE} by the cardinality cap, by attribute. */
export const METRIC_AGENT_OVERFLOW = 'extscope.agent.cardinality.overflow';
/** Counter: internal agent errors, caught and counted, by stage. */
export const METRIC_AGENT_ERRORS = 'extscope.agent.errors';

// --- Values ---
export const ERA = { legacy: 'legacy', modern: 'modern' } as const;
export type Era = (typeof ERA)[keyof typeof ERA];

export const DECLARATION = { unknown: 'unknown', none: 'none', declared: 'declared' } as const;
export type Declaration = (typeof DECLARATION)[keyof typeof DECLARATION];

/**
 * Outcome classes. A result's own `resultType` (e.g. `task`) is used as-is when it is none of these;
 * `error` carries the JSON-RPC code in `rpc.response.status_code`.
 */
export const OUTCOME = {
  complete: 'complete',
  inputRequired: 'input_required',
  task: 'task',
  toolError: 'tool_error',
  error: 'error',
  cancelled: 'cancelled',
} as const;

/** The single bucket that every id failing the identifier grammar or length cap is counted in. */
export const INVALID_EXTENSION_ID = '_invalid';
/** What an attribute value becomes once its cardinality cap is reached (after OTel's `_OTHER` idiom). */
export const OVERFLOW_VALUE = '_OTHER';

/** Reserved `_meta` keys of protocol revision 2026-07-28 (and the un-prefixed trace context keys). */
export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';

export const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;
