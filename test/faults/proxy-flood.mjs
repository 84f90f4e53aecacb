// Sends COUNT concurrent POSTs of SIZE MiB each to http://127.0.0.1:PORT/mcp, each a valid 2026-07-28 tools/call
// whose argument is SIZE MiB long (one shared buffer, so this process stays small), from a client named `flood`.
// Prints one JSON line when every answer came: {"statuses": {"413": N, ...}, "failed": N}.
// Usage: node proxy-flood.mjs PORT COUNT SIZE_MIB
import http from 'node:http';

const [port, count, sizeMiB] = process.argv.slice(2).map(Number);
const meta = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'flood', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': { extensions: {} },
};
const filler = Buffer.alloc(sizeMiB * 1024 * 1024, 'a');
const statuses = {};
let failed = 0;
await Promise.all(
  Array.from({ length: count }, (_, id) => {
    const head = Buffer.from(
      JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'echo', _meta: meta, arguments: { text: '' } } }).replace(/""\}\}\}$/, '"'),
    );
    const tail = Buffer.from('"}}}');
    const length = head.length + filler.length + tail.length;
    return new Promise((resolve) => {
      const request = http.request(
        {
          host: '127.0.0.1',
          port,
          path: '/mcp',
          method: 'POST',
          agent: false,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': '2026-07-28',
            'content-length': length,
          },
        },
        (response) => {
          statuses[response.statusCode] = (statuses[response.statusCode] ?? 0) + 1;
          response.resume();
          response.once('end', resolve);
          response.once('error', resolve);
        },
      );
      request.once('error', () => {
        failed++;
        resolve();
      });
      request.write(head);
      request.write(filler);
      request.end(tail);
    });
  }),
);
process.stdout.write(`${JSON.stringify({ statuses, failed })}\n`);
