// The "shop" service: v2 SDK, ESM, one HTTP port. /mcp is createMcpHandler (a fresh server per request, for
// 2026-07-28 clients); /session keeps one server per 2025-era session, so its requests keep their declaration.
// The method `com.example/replayable` answers -32021 (it requires the client to declare com.example/replay).
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { McpServer, MissingRequiredClientCapabilityError, createMcpHandler } from '@modelcontextprotocol/server';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import { z } from 'zod';
import tools from './tools.cjs';

const extensions = tools.advertised({ 'io.modelcontextprotocol/tasks': {}, 'com.example/search': { mode: 'fast' } });

function shop() {
  const server = tools.registerTools(new McpServer({ name: 'shop', version: '2.3.0' }, { capabilities: { extensions } }), z);
  // No demo client declares com.example/replay, so every call of this method is refused with -32021.
  server.server.setRequestHandler('com.example/replayable', { params: z.object({}).passthrough() }, async () => {
    throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { 'com.example/replay': {} } } });
  });
  return server;
}

const perRequest = toNodeHandler(createMcpHandler(shop));
const sessions = new Map();
const http = createServer(async (req, res) => {
  if (req.url?.startsWith('/mcp')) return perRequest(req, res);
  const sessionId = req.headers['mcp-session-id'];
  let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
  if (transport === undefined) {
    transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => sessions.set(id, transport) });
    transport.onclose = () => sessions.delete(transport.sessionId);
    await shop().connect(transport);
  }
  await transport.handleRequest(req, res);
});
http.listen(0, '127.0.0.1', () => tools.announce(http));
process.on('SIGTERM', () => {
  http.closeAllConnections();
  http.close();
});
