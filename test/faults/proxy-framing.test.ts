import http from 'node:http';
import { type AddressInfo, type Server, type Socket, connect, createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type OtlpSink, startOtlpSink } from '../support/otlp-sink.js';
import { agentEnv } from '../support/processes.js';
import { type ListeningChild, startProxyProcess, toolsCall } from '../support/servers.js';

/**
 * An upstream whose answers are the same bytes every time (no Date header), so what reaches a client through the
 * proxy can be compared byte for byte with what reaches it directly. `POST /mcp` answers a JSON-RPC result to the
 * request's id: with a Content-Length for an even id, chunked in two writes for an odd one, and as an SSE stream
 * written a few bytes at a time (its event split across packets) when the client accepts only `text/event-stream`.
 * `/empty` answers 204, `/head` a body (not sent for HEAD), `/upgrade` switches to an echo of the bytes that follow.
 */
async function byteStableUpstream(): Promise<{ url: URL; requests: () => number; close(): Promise<void> }> {
  let requests = 0;
  const server = http.createServer((request, response) => {
    requests++;
    response.sendDate = false;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/empty') return void response.writeHead(204).end();
      if (request.url === '/head') return void response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '5' }).end('hello');
      const { id } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number };
      const answer = JSON.stringify({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: `answer ${id}` }] } });
      if (request.headers.accept === 'text/event-stream') {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        const event = `event: message\ndata: ${answer}\n\n`;
        void (async () => {
          for (let at = 0; at < event.length; at += 7) {
            response.write(event.slice(at, at + 7));
            await sleep(2);
          }
          response.end();
        })();
      } else if (id % 2 === 0) {
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
        response.end(answer);
      } else {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write(answer.slice(0, 10));
        response.end(answer.slice(10));
      }
    });
  });
  server.on('upgrade', (request: http.IncomingMessage, socket: Socket, head: Buffer) => {
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n');
    if (head.length > 0) socket.write(head);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`),
    requests: () => requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const post = (body: string, extra = ''): string =>
  `POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;

/** Writes each of `pieces` to `port` (a pause between them), and resolves with all that came back until the close. */
function exchange(port: number, pieces: string[], pauseMs = 0, until?: (received: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = connect(port, '127.0.0.1', () => {
      void (async () => {
        for (const piece of pieces) {
          socket.write(piece);
          if (pauseMs > 0) await sleep(pauseMs);
        }
      })();
    });
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      if (until?.(received) === true) socket.end();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
}

let sink: OtlpSink;
beforeAll(async () => {
  sink = await startOtlpSink();
});
afterAll(async () => {
  await sink?.close();
});
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

async function proxyFor(upstream: URL, service: string): Promise<ListeningChild> {
  const proxy = await startProxyProcess(upstream, agentEnv(sink.url, { OTEL_SERVICE_NAME: service }));
  cleanups.push(() => proxy.stop());
  return proxy;
}

const requests = (client: string, outcome?: string): number =>
  sink.sum('extscope.requests', { 'extscope.client.name': client, ...(outcome === undefined ? {} : { 'extscope.outcome': outcome }) });

describe('extscope proxy: the framing it reads as the bytes pass', () => {
  it('answers pipelined requests in order, with the bytes the upstream sent, and counts each once', async () => {
    const upstream = await byteStableUpstream();
    cleanups.push(() => upstream.close());
    const proxy = await proxyFor(upstream.url, 'framing-pipelined');
    // Three requests in one write, the last closing the connection: a JSON answer with a length, a chunked one, another.
    const pipelined = [post(toolsCall(2, 'pipelined')) + post(toolsCall(3, 'pipelined')) + post(toolsCall(4, 'pipelined'), 'Connection: close\r\n')];
    const direct = await exchange(Number(upstream.url.port), pipelined);
    const through = await exchange(Number(proxy.url.port), pipelined);
    expect(direct.match(/HTTP\/1\.1 200 OK/g)).toHaveLength(3);
    expect(direct).toContain('Transfer-Encoding: chunked');
    expect(through).toBe(direct);
    expect([...through.matchAll(/answer (\d)/g)].map((match) => match[1])).toEqual(['2', '3', '4']);
    await proxy.stop();
    await expect.poll(() => requests('pipelined'), { timeout: 10_000 }).toBe(3);
    expect(requests('pipelined', 'complete')).toBe(3);
  });

  it('reads a chunked request body sent a few bytes at a time and an SSE answer split across packets: the same bytes reach the client, counted', async () => {
    const upstream = await byteStableUpstream();
    cleanups.push(() => upstream.close());
    const proxy = await proxyFor(upstream.url, 'framing-split');
    const body = toolsCall(5, 'split');
    // The body in two chunks, with a chunk extension and a trailer; sent in pieces that cut the chunk size lines.
    const chunked =
      'POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n' +
      `${(20).toString(16)};ext=1\r\n${body.slice(0, 20)}\r\n${(body.length - 20).toString(16)}\r\n${body.slice(20)}\r\n0\r\nX-Trailer: t\r\n\r\n`;
    const pieces = chunked.match(/[^]{1,9}/g)!;
    const direct = await exchange(Number(upstream.url.port), pieces, 2);
    const through = await exchange(Number(proxy.url.port), pieces, 2);
    expect(direct).toMatch(/^HTTP\/1\.1 200 OK\r\nContent-Type: text\/event-stream\r\n/i);
    // The event went out in 7-byte chunks: without their framing it is one event.
    const events = direct
      .slice(direct.indexOf('\r\n\r\n') + 4)
      .replace(/(?:^|\r\n)[0-9a-f]+\r\n/g, '')
      .replace(/\r\n$/, '');
    expect(events).toMatch(/^event: message\ndata: \{"jsonrpc":"2\.0","id":5,.*answer 5.*\n\n$/);
    expect(through).toBe(direct);
    await proxy.stop();
    await expect.poll(() => requests('split'), { timeout: 10_000 }).toBe(1);
    expect(requests('split', 'complete')).toBe(1);
  });

  it('passes HEAD (no body after its length), 204, an HTTP/1.0 request and an Upgrade with the bytes after it unchanged', async () => {
    const upstream = await byteStableUpstream();
    cleanups.push(() => upstream.close());
    const proxy = await proxyFor(upstream.url, 'framing-kinds');
    const kinds = ['HEAD /head HTTP/1.1\r\nHost: x\r\n\r\nGET /empty HTTP/1.1\r\nHost: x\r\n\r\n' + post(toolsCall(6, 'kinds'), 'Connection: close\r\n')];
    const direct = await exchange(Number(upstream.url.port), kinds);
    const through = await exchange(Number(proxy.url.port), kinds);
    expect(direct).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*Content-Length: 5\r\n[^]*\r\n\r\nHTTP\/1\.1 204 No Content\r\n/i);
    expect(through).toBe(direct);
    const old = [`POST /mcp HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: ${toolsCall(8, 'kinds').length}\r\n\r\n${toolsCall(8, 'kinds')}`];
    const oldThrough = await exchange(Number(proxy.url.port), old);
    expect(oldThrough).toBe(await exchange(Number(upstream.url.port), old));
    expect(oldThrough).toContain('answer 8');
    const upgrade = ['GET /upgrade HTTP/1.1\r\nHost: x\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\nfirst ', 'second'];
    const done = (received: string): boolean => received.endsWith('first second');
    const echoed = await exchange(Number(proxy.url.port), upgrade, 20, done);
    expect(echoed).toBe(await exchange(Number(upstream.url.port), upgrade, 20, done));
    expect(echoed).toMatch(/^HTTP\/1\.1 101 Switching Protocols\r\n[^]*\r\n\r\nfirst second$/);
    await proxy.stop();
    await expect.poll(() => requests('kinds'), { timeout: 10_000 }).toBe(2);
  });

  it('refuses a request that could be read two ways (400) and a head over 16 KiB (431), and sends neither upstream', async () => {
    const upstream = await byteStableUpstream();
    cleanups.push(() => upstream.close());
    const proxy = await proxyFor(upstream.url, 'framing-refused');
    // Read by its length, the smuggled GET is a body; read as chunked, it is a second request: neither is relayed.
    const smuggled = await exchange(Number(proxy.url.port), [
      'POST /mcp HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 33\r\n\r\n0\r\n\r\nGET /empty HTTP/1.1\r\nHost: x\r\n\r\n',
    ]);
    expect(smuggled).toBe('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    const large = await exchange(Number(proxy.url.port), [`GET /empty HTTP/1.1\r\nHost: x\r\nX-Large: ${'a'.repeat(17 * 1024)}\r\n\r\n`]);
    expect(large).toBe('HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n');
    expect(upstream.requests()).toBe(0);
    const after = await exchange(Number(proxy.url.port), ['GET /empty HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']);
    expect(after).toMatch(/^HTTP\/1\.1 204 No Content\r\n/);
    expect(upstream.requests()).toBe(1);
  });

  it('sends a request again, once, on a fresh connection when the upstream closed its kept-alive one as the request came', async () => {
    // Answers the first request of each connection, then closes the connection when the next one arrives (an idle
    // timeout racing it): the second request reaches only the next connection.
    let connections = 0;
    const answer = (id: number): string => {
      const json = JSON.stringify({ jsonrpc: '2.0', id, result: { content: [] } });
      return `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\n\r\n${json}`;
    };
    const server: Server = createServer((socket) => {
      connections++;
      let answered = false;
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        if (answered) return void socket.destroy();
        text += chunk.toString('latin1');
        const match = /"id":(\d+)/.exec(text);
        if (match === null || !text.endsWith('}}}')) return;
        answered = true;
        socket.write(answer(Number(match[1])));
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(() => resolve())));
    const proxy = await proxyFor(new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`), 'framing-stale');
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    cleanups.push(async () => agent.destroy());
    const call = (id: number): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        const request = http.request(proxy.url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (response) => {
          let body = '';
          response.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
        });
        request.on('error', reject);
        request.end(toolsCall(id, 'stale'));
      });
    expect(await call(1)).toMatchObject({ status: 200, body: expect.stringContaining('"id":1') });
    expect(await call(2)).toMatchObject({ status: 200, body: expect.stringContaining('"id":2') });
    expect(connections).toBe(2);
    await proxy.stop();
    await expect.poll(() => requests('stale'), { timeout: 10_000 }).toBe(2);
  });
});
