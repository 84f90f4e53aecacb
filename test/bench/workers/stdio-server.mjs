// The server side of agent-stdio.mjs: one v2 McpServer behind serveStdio on this process's stdin/stdout, as an
// MCP client launches it. The driver runs it as is (uninstrumented) or under the zero-code entry
// (`node --import @extscope/agent/register`), exactly as a user runs it. On SIGUSR2 it writes its own CPU time so far to
// stderr, so the driver can take the CPU spent between two marks, in microseconds: the whole process's, and its
// main thread's alone.
//   node [--import @extscope/agent/register] agent-stdio-server.mjs
import { createRequire } from 'node:module';
import { mainThreadMicros } from '../lib/main-thread-cpu.mjs';

process.on('SIGUSR2', () => {
  const { user, system } = process.cpuUsage();
  process.stderr.write(`${JSON.stringify({ cpuMicros: user + system, mainMicros: mainThreadMicros() })}\n`);
});

const require = createRequire(import.meta.url);
const { McpServer } = require('@modelcontextprotocol/server');
const { serveStdio } = require('@modelcontextprotocol/server/stdio');
const { z } = await import('zod');

serveStdio(() => {
  const server = new McpServer({ name: 'bench-stdio', version: '1.0.0' }, { capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } });
  server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return server;
});
