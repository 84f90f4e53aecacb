// The "docs" service on the v2 SDK, CommonJS: createMcpHandler serves 2026-07-28 and 2025-era clients.
'use strict';
const { createServer } = require('node:http');
const { McpServer, createMcpHandler } = require('@modelcontextprotocol/server');
const { toNodeHandler } = require('@modelcontextprotocol/node');
const { z } = require('zod');
const tools = require('./tools.cjs');

const extensions = tools.advertised({ 'com.example/search': { mode: 'full' } });
const handler = createMcpHandler(() => tools.registerTools(new McpServer({ name: 'docs', version: '2.0.1' }, { capabilities: { extensions } }), z));
const http = createServer(toNodeHandler(handler));
http.listen(0, '127.0.0.1', () => tools.announce(http));
process.on('SIGTERM', () => {
  http.closeAllConnections();
  http.close(() => handler.close());
});
