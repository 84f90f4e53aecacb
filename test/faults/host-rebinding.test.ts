import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildCollector, spawnCollector, tempDir } from '../collector/helpers/collector.js';
import { MINUTE_NS, encodeMetrics, metricsRequest, msToNs, requestPoint } from '../collector/helpers/otlp.js';
import { matrixRequests } from '../support/counting-clients.js';

/**
 * Issue 42, finding 3: DNS rebinding. A page of `evil.example` whose name the attacker points at 127.0.0.1 is "same
 * origin" with a loopback collector, so its requests carry `Host: evil.example:4318` and `Origin:
 * http://evil.example:4318`; without tokens (the default) they read every API route and `POST /admin/backup` gave
 * the whole database. Every route now refuses a Host that is not a loopback name, before any work; agents, the
 * dashboard and Prometheus on 127.0.0.1, localhost and [::1] are unaffected.
 */

interface Answer {
  status: number;
  body: Buffer;
}

/** A request with the Host (and Origin) given, over a connection to the collector's loopback address. */
function send(
  url: string,
  method: string,
  path: string,
  host: string,
  options: { origin?: string; contentType?: string; body?: Buffer } = {},
): Promise<Answer> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host };
    if (options.origin !== undefined) headers['origin'] = options.origin;
    if (options.contentType !== undefined) headers['content-type'] = options.contentType;
    if (options.body !== undefined) headers['content-length'] = String(options.body.length);
    const request = httpRequest({ host: target.hostname, port: target.port, method, path, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

function exportBody(client: string): Buffer {
  const t = msToNs(Date.now());
  return encodeMetrics(
    metricsRequest({ resource: { instance: `i-${client}` }, requests: [requestPoint({ client, count: 1, startNs: t - MINUTE_NS, timeNs: t })] }),
  );
}

/** Every kind of route: the API, admin, the dashboard and its assets, OTLP ingest, /metrics, the probes, an unknown path. */
const ROUTES: { method: string; path: string; contentType?: string; body?: () => Buffer }[] = [
  { method: 'GET', path: '/api/v1/matrix?from=-1h' },
  { method: 'GET', path: '/api/v1/instances' },
  { method: 'GET', path: '/api/v1/alerts' },
  { method: 'GET', path: '/api/v1/matrix?from=-1h&format=csv' },
  { method: 'POST', path: '/admin/backup', contentType: 'application/json', body: () => Buffer.from('{}') },
  { method: 'GET', path: '/' },
  { method: 'GET', path: '/index.html' },
  { method: 'POST', path: '/v1/metrics', contentType: 'application/x-protobuf', body: () => exportBody('rebinding') },
  { method: 'POST', path: '/v1/traces', contentType: 'application/json', body: () => Buffer.from('{}') },
  { method: 'GET', path: '/metrics' },
  { method: 'GET', path: '/healthz' },
  { method: 'GET', path: '/readyz' },
  { method: 'GET', path: '/no-such-route' },
];

describe('a loopback collector answers only to loopback names', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let collector: ChildCollector;
  let port: string;

  beforeAll(async () => {
    dir = await tempDir();
    collector = await spawnCollector(join(dir.dir, 'extscope.db'));
    port = new URL(collector.url).port;
  });
  afterAll(async () => {
    collector.child.kill('SIGKILL');
    await collector.exited;
    await dir.cleanup();
  });

  it('Host: evil.example:<port> with the same Origin: every route is refused 421, nothing stored, no backup taken', async () => {
    const evil = `evil.example:${port}`;
    for (const route of ROUTES) {
      const answer = await send(collector.url, route.method, route.path, evil, {
        origin: `http://${evil}`,
        ...(route.contentType === undefined ? {} : { contentType: route.contentType }),
        ...(route.body === undefined ? {} : { body: route.body() }),
      });
      expect({ route: `${route.method} ${route.path}`, status: answer.status }).toEqual({ route: `${route.method} ${route.path}`, status: 421 });
      expect(JSON.parse(answer.body.toString('utf8'))).toMatchObject({
        statusCode: 421,
        code: 'EXTSCOPE_HOST_NOT_ALLOWED',
        message: expect.stringContaining(`Host "${evil}" is not a name of this collector`),
      });
    }
    // Other names of the attacker's, and look-alikes of loopback names.
    for (const host of ['evil.example', 'localhost.evil.example', '127.0.0.1.nip.io', 'localhost.', `[::2]:${port}`, `0.0.0.0:${port}`]) {
      expect({ host, status: (await send(collector.url, 'GET', '/api/v1/matrix?from=-1h', host)).status }).toEqual({ host, status: 421 });
    }
    expect(await matrixRequests(collector.url)).toEqual({});
  });

  it('127.0.0.1, localhost and [::1], with or without the port: the API, the dashboard, ingest, /metrics and the probes answer', async () => {
    const hosts = [
      `127.0.0.1:${port}`,
      '127.0.0.1',
      `localhost:${port}`,
      'localhost',
      `LOCALHOST:${port}`,
      `[::1]:${port}`,
      '[::1]',
      '::1',
      `127.1.2.3:${port}`,
    ];
    for (const [index, host] of hosts.entries()) {
      const client = `agent-${index}`;
      const exported = await send(collector.url, 'POST', '/v1/metrics', host, { contentType: 'application/x-protobuf', body: exportBody(client) });
      expect({ host, status: exported.status }).toEqual({ host, status: 200 });
      for (const path of ['/api/v1/matrix?from=-1h', '/', '/metrics', '/healthz', '/readyz']) {
        expect({ host, path, status: (await send(collector.url, 'GET', path, host)).status }).toEqual({ host, path, status: 200 });
      }
      // The dashboard's own page, as a browser on that name would load it: same-origin requests pass.
      const page = await send(collector.url, 'GET', '/', host, { origin: `http://${host}` });
      expect(page.body.toString('utf8')).toMatch(/<html/i);
    }
    expect(await matrixRequests(collector.url)).toEqual(Object.fromEntries(hosts.map((_, index) => [`agent-${index}`, 1])));
    // fetch and node's http client send the address they connect to.
    expect((await fetch(`${collector.url}/api/v1/matrix?from=-1h`)).status).toBe(200);
    expect((await fetch(`http://localhost:${port}/healthz`)).status).toBe(200);
  });
});
