/**
 * Structural shapes of the MCP SDK objects the agent reads or wraps. The SDKs' own types are not imported: the
 * agent serves both majors (v2 `@modelcontextprotocol/server`, v1 `@modelcontextprotocol/sdk`) and their ESM
 * and CJS builds without depending on either, so it names only the members it touches, and checks every value
 * before use (a member may be missing in some version, or replaced by the application).
 */

/**
 * A `Server` (v1 and v2), read once per `connect`. `getCapabilities()` is public; `_serverInfo` is not, but both
 * majors keep the constructor's `serverInfo` there and no public getter exists.
 */
export interface ServerLike {
  getCapabilities?: () => unknown;
  _serverInfo?: unknown;
}

/** An `McpServer` (v1 and v2): wraps a `Server` as `.server`, and its `connect` delegates to that one's. */
export interface McpServerLike {
  server?: object;
}

export type Connect = (this: unknown, transport: unknown, ...rest: unknown[]) => unknown;

/** A class whose prototype `connect` is patched (`Server`, `McpServer`). */
export interface ConnectableClass {
  prototype: { connect?: Connect };
}

type Callback = (this: unknown, ...args: unknown[]) => unknown;

/**
 * The Transport contract of both majors, as `Protocol.connect` uses it: it assigns `onmessage` and `onclose`,
 * then calls `start()`; every outbound message goes through `send()`. Node's streamable HTTP transport forwards
 * `onmessage`/`onclose` through prototype accessors to an inner transport, so they may not be own properties.
 */
export interface TappableTransport {
  onmessage?: unknown;
  onclose?: unknown;
  send: Callback;
  start: Callback;
}

/** Session transports (2025-era streamable HTTP) expose their session id; others have none. */
export interface SessionTransport {
  sessionId?: unknown;
}

/**
 * The second argument a transport passes to `onmessage`: v2 carries the Fetch API `Request` (headers with
 * `get()`), v1 Node's `requestInfo` (headers as a plain object).
 */
export interface MessageExtra {
  request?: { headers?: { get?: (name: string) => string | null } };
  requestInfo?: { headers?: Record<string, unknown> };
}

/** `serveStdio(factory, options)` of `@modelcontextprotocol/server/stdio`; `options.transport` is the wire. */
export type ServeStdio = (this: unknown, factory: unknown, options?: Record<string, unknown>) => unknown;
/** `StdioServerTransport`, the wire `serveStdio` builds when given none. */
export type StdioTransportClass = new () => object;

/** `createMcpHandler(factory, options)` of `@modelcontextprotocol/server`: returns an {@link McpHttpHandler}. */
export type HandlerFactory = (this: unknown, ...args: unknown[]) => unknown;
/** Its `fetch` serves one HTTP request, building a server instance for it when it gets that far. */
export type HandlerFetch = (this: unknown, request: Request, options?: { parsedBody?: unknown }) => Promise<Response>;
export interface McpHttpHandler {
  fetch?: unknown;
}
