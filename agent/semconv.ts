/**
 * A copy of the unstable (incubating) OpenTelemetry semantic convention names this package uses on spans,
 * as opentelemetry-js-contrib packages keep them: the incubating entry point of
 * `@opentelemetry/semantic-conventions` may change in a minor release. Stable names are imported from the
 * package itself; the names extscope's metrics carry live in `contract/`.
 */

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
