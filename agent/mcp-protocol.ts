/** Names of the MCP protocol itself (not of telemetry) that the agent reads on the wire. */

/** Reserved `_meta` keys of protocol revision 2026-07-28. */
export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
/** The `_meta` key of `notifications/subscriptions/acknowledged` naming the `subscriptions/listen` request. */
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
/** The W3C trace-context key a client may put in `params._meta` (with `tracestate` and `baggage`). */
export const META_TRACEPARENT = 'traceparent';

/** The HTTP header carrying the protocol revision (lower case, as Node and the Fetch API name headers). */
export const HEADER_PROTOCOL_VERSION = 'mcp-protocol-version';

export const METHOD_INITIALIZE = 'initialize';
export const METHOD_TOOLS_CALL = 'tools/call';
export const METHOD_PROMPTS_GET = 'prompts/get';
export const METHOD_RESOURCES_READ = 'resources/read';
export const METHOD_RESOURCES_SUBSCRIBE = 'resources/subscribe';
export const METHOD_RESOURCES_UNSUBSCRIBE = 'resources/unsubscribe';
export const METHOD_SUBSCRIPTIONS_LISTEN = 'subscriptions/listen';
export const NOTIFICATION_CANCELLED = 'notifications/cancelled';
export const NOTIFICATION_SUBSCRIPTIONS_ACKNOWLEDGED = 'notifications/subscriptions/acknowledged';
export const METHOD_SERVER_DISCOVER = 'server/discover';
/** The `_meta` key of a `server/discover` result naming the server (2026-07-28). */
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
/** The HTTP header of a 2025-era streamable HTTP session. */
export const HEADER_SESSION_ID = 'mcp-session-id';
