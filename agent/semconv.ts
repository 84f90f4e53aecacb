/**
 * A copy of the OpenTelemetry names this package uses, checked against `@opentelemetry/semantic-conventions` by
 * the tests. The unstable (incubating) ones are copied as opentelemetry-js-contrib packages keep them: the
 * incubating entry point may change in a minor release. The stable ones are copied too, because importing the
 * package from ESM loads its ESM build, a second copy beside the CJS one the OpenTelemetry SDK packages
 * `require` (0.7 MiB more heap in every instrumented server, for one string). The names extscope's metrics
 * carry live in `contract/`.
 */

/** Stable. */
export const ATTR_ERROR_TYPE = 'error.type';

/** @experimental */
export const ATTR_MCP_SESSION_ID = 'mcp.session.id';
/** @experimental */
export const ATTR_MCP_RESOURCE_URI = 'mcp.resource.uri';
/** @experimental */
export const ATTR_JSONRPC_REQUEST_ID = 'jsonrpc.request.id';
/** @experimental */
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
/** @experimental */
export const ATTR_GEN_AI_PROMPT_NAME = 'gen_ai.prompt.name';
/** @experimental */
export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
/** @experimental The `gen_ai.operation.name` of a tool call. */
export const GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL = 'execute_tool';
/** @experimental */
export const ATTR_PROCESS_PID = 'process.pid';
/** @experimental */
export const ATTR_PROCESS_RUNTIME_NAME = 'process.runtime.name';
/** @experimental */
export const ATTR_PROCESS_RUNTIME_VERSION = 'process.runtime.version';
/**
 * @experimental The attribute of the one stream a metric's values go to past its cardinality limit. Named by
 * the OpenTelemetry metrics SDK specification (the JS SDK uses it too); semantic-conventions has no constant.
 */
export const ATTR_OTEL_METRIC_OVERFLOW = 'otel.metric.overflow';
