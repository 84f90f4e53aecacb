import { DECLARATIONS, ERA, OUTCOME, TRANSPORT } from './values.js';

/**
 * Every attribute of the telemetry contract, once. The tables below drive the agent's recorder (which values
 * each stream carries, which are sender-controlled and need a cardinality guard), the collector's normaliser
 * (how each value is read and checked) and its stored dimensions (`key`, `column`), and the contract page's (docs/contract.md)
 * section. OpenTelemetry names come first; extscope's own live under `extscope.` where no convention exists.
 */

// Resource.
export const ATTR_SERVICE_NAME = 'service.name';
export const ATTR_SERVICE_VERSION = 'service.version';
export const ATTR_SERVICE_INSTANCE_ID = 'service.instance.id';
export const ATTR_HOST_NAME = 'host.name';
/** Deployment attributes users set (OpenTelemetry semantic conventions): part of what a build is, when present. */
export const ATTR_DEPLOYMENT_ENVIRONMENT_NAME = 'deployment.environment.name';
export const ATTR_K8S_NAMESPACE_NAME = 'k8s.namespace.name';
export const ATTR_K8S_DEPLOYMENT_NAME = 'k8s.deployment.name';
/**
 * The sender's process id. Not kept; with `host.name` it tells apart the processes of a sender that sets no
 * `service.instance.id` (the OpenTelemetry Node.js SDK's default resource), see the collector's sender identity.
 */
export const ATTR_PROCESS_PID = 'process.pid';
/** `serverInfo.name` / `.version` of the MCP server object (resource and metric attribute). */
export const ATTR_SERVER_NAME = 'extscope.server.name';
export const ATTR_SERVER_VERSION = 'extscope.server.version';
/**
 * How the MCP server is reached: `stdio` (the process serves exactly one client session over its stdin and
 * stdout, as a client launches it per session) or `http`. Absent when the sender does not know.
 */
export const ATTR_SERVER_TRANSPORT = 'extscope.server.transport';

// Per request.
export const ATTR_MCP_METHOD_NAME = 'mcp.method.name';
export const ATTR_MCP_PROTOCOL_VERSION = 'mcp.protocol.version';
export const ATTR_ERA = 'extscope.era';
/** `clientInfo` name / version as the client declared it (self-reported, not an identity). */
export const ATTR_CLIENT_NAME = 'extscope.client.name';
export const ATTR_CLIENT_VERSION = 'extscope.client.version';
export const ATTR_CLIENT_DECLARATION = 'extscope.client.declaration';
export const ATTR_SERVER_DECLARATION = 'extscope.server.declaration';
export const ATTR_OUTCOME = 'extscope.outcome';
export const ATTR_RPC_RESPONSE_STATUS_CODE = 'rpc.response.status_code';

// Per request and extension id.
export const ATTR_EXTENSION_ID = 'extscope.extension.id';
export const ATTR_EXTENSION_CLIENT_DECLARED = 'extscope.extension.client_declared';
export const ATTR_EXTENSION_SERVER_DECLARED = 'extscope.extension.server_declared';
export const ATTR_EXTENSION_NEGOTIATED = 'extscope.extension.negotiated';
export const ATTR_EXTENSION_REQUIRED = 'extscope.extension.required';
export const ATTR_EXTENSION_FINGERPRINT = 'extscope.extension.fingerprint';

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

// Agent self-observation.
export const ATTR_AGENT_STAGE = 'extscope.agent.stage';
export const ATTR_AGENT_REASON = 'extscope.agent.reason';
export const ATTR_AGENT_ATTRIBUTE = 'extscope.agent.attribute';

export type AttributeType = 'string' | 'boolean' | 'int' | 'string[]';

export interface AttributeSpec {
  readonly name: string;
  /** The field this value is kept in, on both sides (`SeriesDims`, `InstanceIdentity`). */
  readonly key: string;
  /** The stored column. */
  readonly column: string;
  readonly type: AttributeType;
  readonly brief: string;
  /** The values it takes, when the set is known. */
  readonly values?: readonly string[];
  /** Values outside `values` are refused by the collector. */
  readonly closed?: boolean;
  /** A point without it is refused. */
  readonly mandatory?: boolean;
  /** Chosen by a client or a server (not by the agent): the agent caps its cardinality. */
  readonly sender?: boolean;
}

/** Attributes of `extscope.requests`, and of `extscope.extension.requests` before its own. */
export const REQUEST_ATTRIBUTES = [
  { name: ATTR_SERVER_NAME, key: 'serverName', column: 'server_name', type: 'string', sender: true, brief: "the answering server's `serverInfo.name`" },
  {
    name: ATTR_SERVER_VERSION,
    key: 'serverVersion',
    column: 'server_version',
    type: 'string',
    sender: true,
    brief: "the answering server's `serverInfo.version`",
  },
  { name: ATTR_MCP_METHOD_NAME, key: 'method', column: 'method', type: 'string', sender: true, brief: 'the JSON-RPC method, e.g. `tools/call`' },
  {
    name: ATTR_ERA,
    key: 'era',
    column: 'era',
    type: 'string',
    values: [ERA.legacy, ERA.modern],
    brief: '2025 era (capabilities from `initialize`) or 2026-07-28+ (a per-request envelope)',
  },
  {
    name: ATTR_MCP_PROTOCOL_VERSION,
    key: 'protocolVersion',
    column: 'protocol_version',
    type: 'string',
    sender: true,
    brief: 'e.g. `2026-07-28`; absent when unknown',
  },
  {
    name: ATTR_CLIENT_NAME,
    key: 'clientName',
    column: 'client_name',
    type: 'string',
    sender: true,
    brief: '`clientInfo.name`, absent when the client sent none',
  },
  {
    name: ATTR_CLIENT_VERSION,
    key: 'clientVersion',
    column: 'client_version',
    type: 'string',
    sender: true,
    brief: '`clientInfo.version`, absent when the client sent none',
  },
  {
    name: ATTR_CLIENT_DECLARATION,
    key: 'clientDeclaration',
    column: 'client_declaration',
    type: 'string',
    values: DECLARATIONS,
    closed: true,
    mandatory: true,
    brief: "the client's declaration for this request: no capabilities received, received without extensions, at least one id",
  },
  {
    name: ATTR_SERVER_DECLARATION,
    key: 'serverDeclaration',
    column: 'server_declaration',
    type: 'string',
    values: DECLARATIONS,
    closed: true,
    brief: "the answering server's; `unknown` when the request was answered before any server instance existed",
  },
  {
    name: ATTR_OUTCOME,
    key: 'outcome',
    column: 'outcome',
    type: 'string',
    sender: true,
    values: Object.values(OUTCOME),
    brief: 'how the request ended; another `resultType` is passed through as it is',
  },
  {
    name: ATTR_RPC_RESPONSE_STATUS_CODE,
    key: 'statusCode',
    column: 'status_code',
    type: 'string',
    sender: true,
    brief: 'the JSON-RPC error code, when the outcome is `error`',
  },
] as const satisfies readonly AttributeSpec[];

/** The attributes `extscope.extension.requests` adds to {@link REQUEST_ATTRIBUTES}. */
export const EXTENSION_ATTRIBUTES = [
  {
    name: ATTR_EXTENSION_ID,
    key: 'extensionId',
    column: 'extension_id',
    type: 'string',
    mandatory: true,
    sender: true,
    brief: 'the extension id; `_invalid` counts ids failing the grammar, `_OTHER` the cardinality overflow',
  },
  { name: ATTR_EXTENSION_CLIENT_DECLARED, key: 'clientDeclared', column: 'client_declared', type: 'boolean', mandatory: true, brief: 'the client declared it' },
  {
    name: ATTR_EXTENSION_SERVER_DECLARED,
    key: 'serverDeclared',
    column: 'server_declared',
    type: 'boolean',
    mandatory: true,
    brief: 'the answering server advertised it',
  },
  { name: ATTR_EXTENSION_NEGOTIATED, key: 'negotiated', column: 'negotiated', type: 'boolean', brief: 'both did (derived when absent)' },
  { name: ATTR_EXTENSION_REQUIRED, key: 'required', column: 'required', type: 'boolean', brief: 'a `-32021` answer named it as required (false when absent)' },
] as const satisfies readonly AttributeSpec[];

/** Attributes of the advertised-extension gauges. */
export const ADVERTISED_ATTRIBUTES = [
  REQUEST_ATTRIBUTES[0],
  REQUEST_ATTRIBUTES[1],
  { name: ATTR_EXTENSION_ID, key: 'extensionId', column: 'extension_id', type: 'string', mandatory: true, sender: true, brief: 'an id the server advertises' },
  {
    name: ATTR_EXTENSION_FINGERPRINT,
    key: 'fingerprint',
    column: 'fingerprint',
    type: 'string',
    brief: "16 hex digits of SHA-256 over the settings' canonical JSON (keys sorted), never the settings",
  },
] as const satisfies readonly AttributeSpec[];

/** Resource attributes that identify an instance. */
export const RESOURCE_ATTRIBUTES = [
  { name: ATTR_SERVICE_NAME, key: 'service', column: 'service', type: 'string', brief: "the service (default: the server's `serverInfo.name`)" },
  { name: ATTR_SERVICE_INSTANCE_ID, key: 'instanceId', column: 'instance_id', type: 'string', brief: 'unique per process' },
  { name: ATTR_SERVICE_VERSION, key: 'serviceVersion', column: 'service_version', type: 'string', brief: 'the service version' },
  { name: ATTR_HOST_NAME, key: 'host', column: 'host', type: 'string', brief: 'the host' },
  { name: ATTR_SERVER_NAME, key: 'serverName', column: 'server_name', type: 'string', brief: "the MCP server's `serverInfo.name`" },
  { name: ATTR_SERVER_VERSION, key: 'serverVersion', column: 'server_version', type: 'string', brief: "the MCP server's `serverInfo.version`" },
  {
    name: ATTR_SERVER_TRANSPORT,
    key: 'transport',
    column: 'transport',
    type: 'string',
    values: [TRANSPORT.stdio, TRANSPORT.http],
    brief: '`stdio`: the process serves one client session (a session of its build); `http`: a long-lived instance',
  },
  {
    name: ATTR_DEPLOYMENT_ENVIRONMENT_NAME,
    key: 'deploymentEnvironment',
    column: 'deployment_environment',
    type: 'string',
    brief: 'the deployment environment (part of the build)',
  },
  { name: ATTR_K8S_NAMESPACE_NAME, key: 'k8sNamespace', column: 'k8s_namespace', type: 'string', brief: 'the Kubernetes namespace (part of the build)' },
  { name: ATTR_K8S_DEPLOYMENT_NAME, key: 'k8sDeployment', column: 'k8s_deployment', type: 'string', brief: 'the Kubernetes deployment (part of the build)' },
] as const satisfies readonly AttributeSpec[];

/** Span attributes extscope adds to the OpenTelemetry MCP conventions (the collector reads them for examples). */
export const SPAN_ATTRIBUTES = [
  { name: ATTR_ERA, key: 'era', column: 'era', type: 'string', brief: 'as on the metrics' },
  { name: ATTR_CLIENT_NAME, key: 'clientName', column: 'client_name', type: 'string', brief: 'as on the metrics' },
  { name: ATTR_CLIENT_VERSION, key: 'clientVersion', column: 'client_version', type: 'string', brief: 'as on the metrics' },
  { name: ATTR_CLIENT_DECLARATION, key: 'clientDeclaration', column: 'client_declaration', type: 'string', brief: 'as on the metrics' },
  { name: ATTR_OUTCOME, key: 'outcome', column: 'outcome', type: 'string', brief: 'as on the metrics' },
  { name: ATTR_CLIENT_EXTENSIONS, key: 'clientExtensions', column: 'client_extensions', type: 'string[]', brief: 'ids the client declared' },
  {
    name: ATTR_CLIENT_EXTENSION_FINGERPRINTS,
    key: 'clientFingerprints',
    column: 'client_fingerprints',
    type: 'string[]',
    brief: 'their settings fingerprints, index-aligned',
  },
  {
    name: ATTR_CLIENT_EXTENSION_SETTINGS,
    key: 'clientSettings',
    column: 'client_settings',
    type: 'string[]',
    brief: 'their raw settings as JSON, only when capturing settings was switched on',
  },
  { name: ATTR_SERVER_EXTENSIONS, key: 'serverExtensions', column: 'server_extensions', type: 'string[]', brief: 'ids the server advertised' },
  {
    name: ATTR_SERVER_EXTENSION_FINGERPRINTS,
    key: 'serverFingerprints',
    column: 'server_fingerprints',
    type: 'string[]',
    brief: 'their settings fingerprints, index-aligned',
  },
  { name: ATTR_NEGOTIATED_EXTENSIONS, key: 'negotiated', column: 'negotiated', type: 'string[]', brief: 'ids in both' },
  { name: ATTR_REQUIRED_EXTENSIONS, key: 'required', column: 'required', type: 'string[]', brief: 'ids a `-32021` answer named' },
  { name: ATTR_INVALID_EXTENSION_COUNT, key: 'invalidCount', column: 'invalid_count', type: 'int', brief: 'client ids failing the grammar' },
  { name: ATTR_DROPPED_EXTENSION_COUNT, key: 'droppedCount', column: 'dropped_count', type: 'int', brief: 'client ids over the per-request cap' },
] as const satisfies readonly AttributeSpec[];

type Value<A extends AttributeSpec> = A['type'] extends 'boolean' ? boolean : string;

/** The stored dimensions of a request or extension stream, keyed as the tables say (absent = null). */
export type RequestDims = { -readonly [A in (typeof REQUEST_ATTRIBUTES)[number] as A['key']]: Value<A> | null };
export type ExtensionDims = { -readonly [A in (typeof EXTENSION_ATTRIBUTES)[number] as A['key']]: Value<A> | null };
export type RequestDimKey = keyof RequestDims;
export type ExtensionDimKey = keyof ExtensionDims;
export type ResourceKey = (typeof RESOURCE_ATTRIBUTES)[number]['key'];
