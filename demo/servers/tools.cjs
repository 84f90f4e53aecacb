// The tools every demo server registers (shared by the ESM and CommonJS servers).
'use strict';

/** `legacyShape`: the v1 SDK takes a plain object of zod fields, v2 a zod object. */
function registerTools(server, z, legacyShape) {
  const shape = (fields) => (legacyShape ? fields : z.object(fields));
  server.registerTool('search', { description: 'Search the catalogue', inputSchema: shape({ query: z.string() }) }, async ({ query }) => ({
    content: [{ type: 'text', text: `3 results for ${query}` }],
  }));
  server.registerTool('checkout', { description: 'Always fails: the cart is empty', inputSchema: shape({}) }, async () => {
    throw new Error('the cart is empty');
  });
  return server;
}

/** Extensions from DEMO_EXTENSIONS (JSON), so two instances of one service can advertise different sets. */
function advertised(fallback) {
  return process.env.DEMO_EXTENSIONS === undefined ? fallback : JSON.parse(process.env.DEMO_EXTENSIONS);
}

/** Tells the demo (on stdout: these servers speak MCP over HTTP, not stdio) which port it got. */
function announce(server) {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
}

module.exports = { registerTools, advertised, announce };
