/** Names of the MCP protocol itself (not of telemetry) that the agent reads on the wire. */

/** Reserved `_meta` keys of protocol revision 2026-07-28. */
export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
/** The `_meta` key of `notifications/subscriptions/acknowledged` naming the `subscriptions/listen` request. */
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
