// Below any HTTP proxy: a Node.js TCP relay, each client connection piped byte for byte to its own upstream
// connection, nothing parsed. What it adds to a request's latency is what Node.js's event loop and two extra
// loopback hops cost before any HTTP is read; `wrap-proxy.mjs` prints it beside the proxies. Prints {"port": N}.
// Usage: node bare-tcp-relay.mjs UPSTREAM_PORT
import net from 'node:net';

const upstreamPort = Number(process.argv[2]);
const server = net.createServer((client) => {
  client.setNoDelay(true);
  const upstream = net.connect({ host: '127.0.0.1', port: upstreamPort, noDelay: true });
  client.pipe(upstream).pipe(client);
  const close = () => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close);
  upstream.on('error', close);
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
process.on('SIGTERM', () => process.exit(0));
