import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../../../collector/config.js';
import { ConfigError } from '../../../collector/model/errors.js';
import { BearerToken } from '../../../collector/http/auth/bearer.js';
import { startCollector } from '../../../collector/index.js';
import { type TestCollector, runCli, startTestCollector, tempDir } from '../helpers/collector.js';
import { MINUTE_NS, metricsRequest, msToNs, post, requestPoint, tracesRequest } from '../helpers/otlp.js';

const INGEST = 'ingest-secret-0123456789';
const READ = 'read-secret-9876543210';

function anExport() {
  const t = msToNs(Date.now());
  return metricsRequest({ resource: { instance: 'i-1' }, requests: [requestPoint({ client: 'alpha', count: 1, startNs: t - MINUTE_NS, timeNs: t })] });
}

describe('bearer tokens', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;
  beforeAll(async () => {
    temp = await tempDir();
    // These tests try many wrong tokens on purpose; the failure limit has its own test (test/faults/ingest-auth.test.ts).
    collector = await startTestCollector(temp.dir, { ingestToken: INGEST, readToken: READ, limits: { maxAuthFailuresPerMinute: 10_000 } });
  });
  afterAll(async () => {
    await collector.close();
    await temp.cleanup();
  });

  it('ingest routes refuse a missing, wrong or read token with 401 and an OTLP status, and accept the ingest token', async () => {
    const spans = tracesRequest({ instance: 'i-1' }, []);
    for (const [path, body] of [
      ['/v1/metrics', anExport()],
      ['/v1/traces', spans],
    ] as const) {
      for (const token of [undefined, 'wrong', READ, `${INGEST}x`, INGEST.slice(0, -1)]) {
        const response = await post(collector.url, path, body, token === undefined ? {} : { token });
        expect(response.status, `${path} with ${token}`).toBe(401);
        expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
        expect(response.headers.get('content-type')).toBe('application/x-protobuf');
        expect(Buffer.from(await response.arrayBuffer()).toString()).toMatch(/EXTSCOPE_INGEST_TOKEN/);
      }
      expect((await post(collector.url, path, body, { token: INGEST })).status).toBe(200);
    }
    const unauthorised = await fetch(`${collector.url}/v1/metrics`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Basic ${INGEST}` },
      body: '{}',
    });
    expect(unauthorised.status).toBe(401);
    expect(await unauthorised.json()).toMatchObject({ message: expect.stringMatching(/bearer token/) });
  });

  it('every read route refuses a missing, wrong or ingest token, and accepts the read token', async () => {
    const routes = [
      '/api/v1/matrix',
      '/api/v1/matrix?format=csv',
      '/api/v1/instances',
      '/api/v1/timeseries?extension=io.modelcontextprotocol/tasks',
      '/api/v1/clients',
      '/api/v1/extensions',
      '/api/v1/examples',
      '/metrics',
    ];
    for (const route of routes) {
      for (const token of [undefined, 'wrong', INGEST, `${READ} `.repeat(2)]) {
        const response = await fetch(`${collector.url}${route}`, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
        expect(response.status, `${route} with ${token}`).toBe(401);
        expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
      }
      const response = await fetch(`${collector.url}${route}`, { headers: { authorization: `Bearer ${READ}` } });
      expect(response.status, route).toBe(200);
    }
    // The matrix did receive the authorised export.
    const view = await fetch(`${collector.url}/api/v1/matrix`, { headers: { authorization: `bearer ${READ}` } });
    expect(((await view.json()) as { rows: { requests: number }[] }).rows[0]?.requests).toBe(1);
  });

  it('health probes stay open', async () => {
    expect((await fetch(`${collector.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${collector.url}/readyz`)).status).toBe(200);
  });
});

describe('where it may listen', () => {
  it('knows loopback addresses', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '::ffff:127.0.0.1']) expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'example.com', '10.0.0.1', '128.0.0.1']) expect(isLoopbackHost(host), host).toBe(false);
  });

  it('refuses a non-loopback address without both tokens, before touching the database', async () => {
    const temp = await tempDir();
    try {
      const dbPath = join(temp.dir, 'never.db');
      await expect(startCollector({ host: '0.0.0.0', port: 0, dbPath })).rejects.toThrow(ConfigError);
      await expect(startCollector({ host: '0.0.0.0', port: 0, dbPath, ingestToken: INGEST })).rejects.toThrow(/EXTSCOPE_READ_TOKEN is not set/);
      await expect(startCollector({ host: '::', port: 0, dbPath, readToken: READ })).rejects.toThrow(/EXTSCOPE_INGEST_TOKEN is not set/);
      expect(existsSync(dbPath)).toBe(false);

      const cli = await runCli(['collector', '--host', '0.0.0.0', '--db', dbPath]);
      expect(cli.code).toBe(2);
      expect(cli.stderr).toMatch(
        /refusing to listen on 0\.0\.0\.0: it is not a loopback address and EXTSCOPE_INGEST_TOKEN and EXTSCOPE_READ_TOKEN are not set/,
      );
      const fromEnv = await runCli(['collector', '--db', dbPath], { EXTSCOPE_HOST: '0.0.0.0', EXTSCOPE_INGEST_TOKEN: INGEST });
      expect(fromEnv.code).toBe(2);
      expect(fromEnv.stderr).toMatch(/EXTSCOPE_READ_TOKEN is not set/);
      expect(existsSync(dbPath)).toBe(false);
    } finally {
      await temp.cleanup();
    }
  });

  it('compares tokens whatever their shape', () => {
    const token = new BearerToken(INGEST);
    expect(token.matches(`Bearer ${INGEST}`)).toBe(true);
    expect(token.matches(`bearer  ${INGEST} `)).toBe(true);
    for (const header of [undefined, '', 'Bearer', 'Bearer ', `Basic ${INGEST}`, `Bearer ${INGEST} extra`, `Bearer ${INGEST.toUpperCase()}`]) {
      expect(token.matches(header), String(header)).toBe(false);
    }
    expect(new BearerToken('').matches('Bearer ')).toBe(false);
  });
});
