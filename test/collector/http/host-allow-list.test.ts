import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { allowedHostsValue, resolveConfig } from '../../../collector/config.js';
import { ConfigError } from '../../../collector/model/errors.js';
import { type HostPolicy, hostGuard, hostPolicy } from '../../../collector/http/host-allow-list.js';

/** The status of a GET of `path` with `host`, through the guard as the collector's app runs it. */
async function statusFor(policy: HostPolicy, path: string, host: string): Promise<number> {
  const app = Fastify();
  app.addHook('onRequest', hostGuard(policy));
  app.get('/api/v1/matrix', async () => ({ ok: true }));
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async () => ({ status: 'ready' }));
  try {
    return (await app.inject({ method: 'GET', url: path, headers: { host } })).statusCode;
  } finally {
    await app.close();
  }
}

describe('the Host allow-list', () => {
  it('on loopback: loopback names and the configured ones, any port; everything else 421 on every path', async () => {
    const policy = hostPolicy(true, ['Proxy.Example']);
    for (const host of ['localhost', 'localhost:4318', '127.0.0.1:4318', '127.9.8.7', '[::1]:4318', '::1', 'proxy.example:8080', 'PROXY.EXAMPLE']) {
      expect({ host, status: await statusFor(policy, '/api/v1/matrix', host) }).toEqual({ host, status: 200 });
    }
    for (const host of ['evil.example:4318', 'localhost.evil.example', '10.0.0.5:4318', '[::2]']) {
      for (const path of ['/api/v1/matrix', '/healthz', '/readyz'])
        expect({ host, path, status: await statusFor(policy, path, host) }).toEqual({ host, path, status: 421 });
    }
  });

  it('beyond loopback with names configured: those and loopback names; the probes stay open to a pod address', async () => {
    const policy = hostPolicy(false, ['extscope.example.com', '2001:db8::1']);
    expect(await statusFor(policy, '/api/v1/matrix', 'extscope.example.com')).toBe(200);
    expect(await statusFor(policy, '/api/v1/matrix', '[2001:db8::1]:4318')).toBe(200);
    expect(await statusFor(policy, '/api/v1/matrix', '127.0.0.1:4318')).toBe(200);
    expect(await statusFor(policy, '/api/v1/matrix', '10.1.2.3:4318')).toBe(421);
    expect(await statusFor(policy, '/healthz', '10.1.2.3:4318')).toBe(200);
    expect(await statusFor(policy, '/readyz?verbose=1', '10.1.2.3:4318')).toBe(200);
  });

  it('beyond loopback with none configured: any Host (tokens are required there)', async () => {
    expect(await statusFor(hostPolicy(false, undefined), '/api/v1/matrix', 'anything.example:4318')).toBe(200);
  });

  it('the option: a comma-separated list, empty entries dropped; a URL or a path is refused at start', () => {
    expect(allowedHostsValue(' a.example , ,b.example:4318 ')).toEqual(['a.example', 'b.example:4318']);
    expect(resolveConfig({ dbPath: 'x.db', allowedHosts: [] }).allowedHosts).toBeUndefined();
    expect(() => resolveConfig({ dbPath: 'x.db', allowedHosts: ['http://a.example/'] })).toThrow(ConfigError);
  });
});
