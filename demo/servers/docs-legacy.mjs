// The "docs" service on the legacy v1 SDK (@modelcontextprotocol/sdk), ESM, HTTP with sessions: 2025 era only.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import tools from './tools.cjs';

const extensions = tools.advertised({ 'com.example/search': { mode: 'full' } });
const sessions = new Map();
const http = createServer(async (req, res) => {
  const sessionId = req.headers['mcp-session-id'];
  let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
  if (transport === undefined) {
    transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => sessions.set(id, transport) });
    transport.onclose = () => sessions.delete(transport.sessionId);
    await tools.registerTools(new McpServer({ name: 'docs', version: '1.8.0' }, { capabilities: { extensions } }), z, true).connect(transport);
  }
  await transport.handleRequest(req, res);
});
http.listen(0, '127.0.0.1', () => tools.announce(http));
process.on('SIGTERM', () => {
  http.closeAllConnections();
  http.close();
});
