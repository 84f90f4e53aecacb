import { once } from 'node:events';
import http from 'node:http';
import { type AddressInfo, type Socket, connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { agentEnv } from '../support/processes.js';
import { type ListeningChild, startProxyProcess } from '../support/servers.js';

const HEADER_SLOWLORIS = 300;
const BODY_SLOWLORIS = 100;

/** An upstream on loopback that reads each request to its end and answers 200, counting the connections it holds. */
async function countingUpstream(): Promise<{ url: URL; open: () => number; requests: () => number; close(): Promise<void> }> {
  let open = 0;
  let requests = 0;
  const server = http.createServer((request, response) => {
    requests++;
    request.resume();
    request.once('end', () => response.end('{"jsonrpc":"2.0","id":1,"result":{}}'));
  });
  server.on('connection', (socket: Socket) => {
    open++;
    socket.once('close', () => open--);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`),
    open: () => open,
    requests: () => requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

/** Opens a socket to `port`, writes `first`, then a byte every `everyMs` until the peer closes it; resolves with when that was. */
function slowSender(
  port: number,
  first: string,
  everyMs: number,
  sockets: Socket[],
): { connected: Promise<void>; closedAfterMs: Promise<number>; received: () => string } {
  const started = Date.now();
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('error', () => {});
  const timer = setInterval(() => {
    if (socket.writable) socket.write('a');
  }, everyMs);
  const connected = once(socket, 'connect').then(() => void socket.write(first));
  const closedAfterMs = once(socket, 'close').then(() => {
    clearInterval(timer);
    return Date.now() - started;
  });
  return { connected, closedAfterMs, received: () => received };
}

describe('extscope proxy: deadlines for slow clients', () => {
  it(`closes ${HEADER_SLOWLORIS} header slowloris and ${BODY_SLOWLORIS} one-byte-per-5-s bodies by its own deadlines, releasing the upstream connections, and keeps serving`, async () => {
    const upstream = await countingUpstream();
    cleanups.push(() => upstream.close());
    const proxy: ListeningChild = await startProxyProcess(
      upstream.url,
      agentEnv('http://127.0.0.1:9', { OTEL_METRICS_EXPORTER: 'none', OTEL_TRACES_EXPORTER: 'none' }),
      '/mcp',
      { args: ['--header-timeout', '1', '--body-timeout', '2'] },
    );
    cleanups.push(() => proxy.stop());
    const port = Number(proxy.url.port);
    const sockets: Socket[] = [];
    cleanups.push(async () => {
      for (const socket of sockets) socket.destroy();
    });

    // Headers that never end: a header line now and then.
    const headerSenders = Array.from({ length: HEADER_SLOWLORIS }, () => slowSender(port, 'POST /mcp HTTP/1.1\r\nHost: x\r\nX-a: ', 500, sockets));
    // Complete headers, then a body one byte every 5 s.
    const body = (length: number) => `POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n{`;
    const bodySenders = Array.from({ length: BODY_SLOWLORIS }, () => slowSender(port, body(1000), 5000, sockets));
    await Promise.all([...headerSenders, ...bodySenders].map((sender) => sender.connected));
    // The body senders' requests reached the upstream as they streamed: each holds an upstream connection.
    await expect.poll(() => upstream.requests(), { timeout: 10_000 }).toBe(BODY_SLOWLORIS);
    expect(upstream.open()).toBeGreaterThanOrEqual(BODY_SLOWLORIS);

    const headerClosed = await Promise.all(headerSenders.map((sender) => sender.closedAfterMs));
    const bodyClosed = await Promise.all(bodySenders.map((sender) => sender.closedAfterMs));
    // Closed by the proxy at its deadlines (1 s for headers, 1 + 2 s for a request), not by the clients (they never stop).
    expect(Math.max(...headerClosed)).toBeLessThan(8_000);
    expect(Math.max(...bodyClosed)).toBeLessThan(10_000);
    expect(headerSenders.every((sender) => sender.received().startsWith('HTTP/1.1 408'))).toBe(true);
    expect(bodySenders.every((sender) => sender.received().startsWith('HTTP/1.1 408'))).toBe(true);
    // The upstream connections those requests held are released.
    await expect.poll(() => upstream.open(), { timeout: 5_000 }).toBe(0);

    const honest = await fetch(proxy.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":1,"method":"ping"}',
    });
    expect(honest.status).toBe(200);
    expect(proxy.child.exitCode).toBeNull();
  }, 60_000);
});
