// The floor a Node.js reverse proxy sits on: node:http in, node:http out on kept-alive connections, bodies piped
// both ways, nothing read. `wrap-proxy.mjs` compares `extscope proxy` with it. Prints {"port": N}.
// Usage: node bare-proxy.mjs UPSTREAM_PORT
import http from 'node:http';

const upstreamPort = Number(process.argv[2]);
// Idle upstream connections dropped before the upstream closes them (see the client's agent in wrap-proxy.mjs).
const agent = new http.Agent({ keepAlive: true, maxFreeSockets: 256, timeout: 4000 });
const server = http.createServer((request, response) => {
  const headers = { ...request.headers, host: `127.0.0.1:${upstreamPort}` };
  delete headers.connection;
  const outgoing = http.request({ host: '127.0.0.1', port: upstreamPort, method: request.method, path: request.url, headers, agent }, (answer) => {
    response.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.headers);
    answer.pipe(response);
  });
  outgoing.on('error', () => response.destroy());
  request.pipe(outgoing);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
process.on('SIGTERM', () => process.exit(0));
