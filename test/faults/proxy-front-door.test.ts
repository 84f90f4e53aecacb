import { spawnSync } from 'node:child_process';
import http from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/counting-clients.js';
import { type OtlpSink, startOtlpSink } from '../support/otlp-sink.js';
import { ROOT, agentEnv } from '../support/processes.js';
import { type ListeningChild, startProxyProcess, toolsCall } from '../support/servers.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

/**
 * An upstream on loopback that records what reaches it. `POST …/mcp` answers a JSON-RPC result to the request's id;
 * `…/mcp/` redirects there (307, the upstream's absolute URL, as FastMCP 2.x does); `…/moved` answers with a
 * Location and a Content-Location of its own; anything else is a plain 404 page.
 */
async function recordingUpstream(base = ''): Promise<{ url: URL; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      seen.push({ method: request.method ?? '', url: request.url ?? '', headers: request.headers });
      const origin = `http://${request.headers.host}`;
      if (request.url === `${base}/mcp`) {
        const { id } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number };
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ jsonrpc: '2.0', id, result: { content: [], resultType: 'complete' } }));
      } else if (request.url === `${base}/mcp/`) {
        response.writeHead(307, { location: `${origin}${base}/mcp`, 'content-length': '0' });
        response.end();
      } else if (request.url === `${base}/moved`) {
        response.writeHead(201, {
          location: `${origin}${base}/next?x=1`,
          'content-location': `${base}/doc`,
          link: `<${origin}${base}/next>`,
          'x-elsewhere': 'kept',
        });
        response.end('moved');
      } else if (request.url === `${base}/elsewhere`) {
        response.writeHead(302, { location: 'https://example.com/x' });
        response.end();
      } else {
        response.writeHead(404, { 'content-type': 'text/plain' });
        response.end('Not Found');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}${base}`),
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
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

async function proxyFor(upstreamUrl: URL, service: string, upstreamArg?: string): Promise<ListeningChild> {
  const proxy = await startProxyProcess(
    upstreamUrl,
    agentEnv(sink.url, { OTEL_SERVICE_NAME: service }),
    '/mcp',
    upstreamArg === undefined ? {} : { upstream: upstreamArg },
  );
  cleanups.push(() => proxy.stop());
  return proxy;
}

function post(url: URL, body: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, agent: false },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** Raw bytes to `port`, and all that comes back until the proxy closes the connection. */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(text));
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(received));
  });
}

describe('extscope proxy: what it forwards, where, and what it counts', () => {
  it('normalises an absolute-form target to the upstream (its path only), never to the host it names; refuses `*`', async () => {
    const upstream = await recordingUpstream();
    cleanups.push(() => upstream.close());
    const proxy = await proxyFor(upstream.url, 'door-absolute');
    const body = toolsCall(1, 'absolute');
    const answer = await raw(
      Number(proxy.url.port),
      `POST http://169.254.169.254/mcp HTTP/1.1\r\nHost: 169.254.169.254\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(upstream.seen.map(({ url, headers }) => ({ url, host: headers.host }))).toEqual([{ url: '/mcp', host: upstream.url.host }]);
    const star = await raw(Number(proxy.url.port), 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(star).toMatch(/^HTTP\/1\.1 400 /);
    expect(upstream.seen).toHaveLength(1);
  });

  it('honours --upstream credentials (Basic, unless the client sends its own) and base path, and rewrites Location and Content-Location naming the upstream', async () => {
    const upstream = await recordingUpstream('/base');
    cleanups.push(() => upstream.close());
    const proxy = await proxyFor(upstream.url, 'door-base', `http://user:p%40ss@${upstream.url.host}/base/`);
    expect((await post(proxy.url, toolsCall(1, 'base'))).status).toBe(200);
    expect((await post(proxy.url, toolsCall(2, 'base'), { authorization: 'Bearer own' })).status).toBe(200);
    const moved = await post(new URL('/moved', proxy.url), '{}');
    const elsewhere = await post(new URL('/elsewhere', proxy.url), '{}');
    expect(upstream.seen.map(({ url, headers }) => ({ url, authorization: headers.authorization }))).toEqual([
      { url: '/base/mcp', authorization: `Basic ${Buffer.from('user:p@ss').toString('base64')}` },
      { url: '/base/mcp', authorization: 'Bearer own' },
      { url: '/base/moved', authorization: `Basic ${Buffer.from('user:p@ss').toString('base64')}` },
      { url: '/base/elsewhere', authorization: `Basic ${Buffer.from('user:p@ss').toString('base64')}` },
    ]);
    expect(moved.status).toBe(201);
    expect(moved.headers.location).toBe(`${proxy.url.origin}/next?x=1`);
    expect(moved.headers['content-location']).toBe('/doc');
    // Only those two headers are the proxy's to rewrite; another origin's Location passes as it is.
    expect(moved.headers.link).toBe(`<${upstream.url.origin}/base/next>`);
    expect(moved.headers['x-elsewhere']).toBe('kept');
    expect(elsewhere.headers.location).toBe('https://example.com/x');
  });

  it('passes a redirect and a 404 page unchanged and counts neither as an MCP request', async () => {
    const upstream = await recordingUpstream();
    cleanups.push(() => upstream.close());
    const proxy = await proxyFor(upstream.url, 'door-non-mcp');
    const redirected = await post(new URL('/mcp/', proxy.url), toolsCall(1, 'non-mcp'));
    expect(redirected.status).toBe(307);
    expect(redirected.headers.location).toBe(`${proxy.url.origin}/mcp`);
    const missing = await post(new URL('/other', proxy.url), toolsCall(2, 'non-mcp'));
    expect({ status: missing.status, body: missing.body }).toEqual({ status: 404, body: 'Not Found' });
    expect((await post(proxy.url, toolsCall(3, 'non-mcp'))).status).toBe(200);
    // The proxy exports its last counts as it stops.
    await proxy.stop();
    await expect.poll(() => sink.sum('extscope.requests', { 'extscope.client.name': 'non-mcp' }), { timeout: 10_000 }).toBe(1);
    expect(sink.sum('extscope.requests', { 'extscope.client.name': 'non-mcp', 'extscope.outcome': 'complete' })).toBe(1);
  });

  it('logs one line on stderr when it answers 502', async () => {
    const port = await freePort();
    const proxy = await proxyFor(new URL(`http://127.0.0.1:${port}/mcp`), 'door-502');
    const answer = await post(proxy.url, toolsCall(1, 'unreachable'));
    expect(answer.status).toBe(502);
    await expect
      .poll(() => proxy.stderr(), { timeout: 5_000 })
      .toMatch(new RegExp(`extscope proxy: 502 for POST /mcp: upstream http://127\\.0\\.0\\.1:${port} unreachable \\(ECONNREFUSED\\)\\n`));
  });

  it('refuses a bad --listen, a bad --upstream and a --listen other machines reach, each with its own one-line message and exit code 2', () => {
    const run = (...args: string[]) => {
      const result = spawnSync(process.execPath, [join(ROOT, 'dist/bin/extscope.js'), 'proxy', ...args], { encoding: 'utf8', timeout: 20_000 });
      return { status: result.status, stdout: result.stdout, stderr: result.stderr };
    };
    const upstream = ['--upstream', 'http://127.0.0.1:3000'];
    const cases = {
      listen: run('--listen', 'localhost', ...upstream),
      port: run('--listen', '127.0.0.1:99999', ...upstream),
      scheme: run('--listen', '127.0.0.1:0', '--upstream', 'ftp://127.0.0.1/'),
      url: run('--listen', '127.0.0.1:0', '--upstream', 'not a url'),
      remote: run('--listen', '0.0.0.0:0', ...upstream),
      timeout: run('--listen', '127.0.0.1:0', ...upstream, '--header-timeout', 'soon'),
    };
    for (const result of Object.values(cases)) {
      expect(result.status).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    }
    expect(cases.listen.stderr).toContain("--listen must be HOST:PORT (e.g. 127.0.0.1:8080, [::1]:8080), got 'localhost'");
    expect(cases.port.stderr).toContain("--listen must be HOST:PORT (e.g. 127.0.0.1:8080, [::1]:8080), got '127.0.0.1:99999'");
    expect(cases.scheme.stderr).toContain("--upstream must be an http:// or https:// URL, got the scheme 'ftp:'");
    expect(cases.url.stderr).toContain("--upstream must be an http:// or https:// URL (e.g. http://127.0.0.1:3000), got 'not a url'");
    expect(cases.remote.stderr).toContain('--listen 0.0.0.0:0 is reachable from other machines');
    expect(cases.remote.stderr).toContain('--allow-remote');
    expect(cases.timeout.stderr).toContain("--header-timeout must be a number of seconds above 0, got 'soon'");
    // With --allow-remote the address is taken as meant: it fails only where it cannot be listened on (exit 1; 192.0.2.1,
    // a documentation address, is on no interface here, so nothing is exposed).
    const allowed = run('--listen', '192.0.2.1:0', ...upstream, '--allow-remote');
    expect(allowed.status).toBe(1);
    expect(allowed.stderr).toContain('cannot listen on 192.0.2.1:0');
  });
});
