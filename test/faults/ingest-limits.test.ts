import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, startCollector } from '../../collector/index.js';
import { StoreUnavailableError } from '../../collector/store/store.js';
import { DecompressionBudget } from '../../collector/receiver/otlp/body.js';
import { DecodePool } from '../../collector/receiver/otlp/decode-pool.js';
import { Admission } from '../../collector/receiver/otlp/admission.js';
import { MAX_RETRY_AFTER_SECONDS } from '../../collector/receiver/otlp/gate.js';
import { otlpReceiver } from '../../collector/receiver/otlp/plugin.js';
import { RECEIVE_STALL_MS, ReceiveBudget } from '../../collector/receiver/otlp/receive-budget.js';
import { AuthFailureLimit } from '../../collector/http/auth/failure-limit.js';
import { type ChildCollector, type TestCollector, matrix, spawnCollector, startTestCollector, tempDir } from '../collector/helpers/collector.js';
import { MINUTE_NS, encodeMetrics, metricsRequest, msToNs, postMetrics, requestPoint } from '../collector/helpers/otlp.js';

/** Regression tests for the ingest limits (large exports and overload: ingest-event-loop.test.ts). */

const INGEST = 'ingest-0123456789abcdef';
const READ = 'read-0123456789abcdef';
const now = (): bigint => msToNs(Date.now());

function valid(instance: string, count = 1): Record<string, unknown> {
  const t = now();
  return metricsRequest({ resource: { instance }, requests: [requestPoint({ client: 'alpha', count, startNs: t - MINUTE_NS, timeNs: t })] });
}

/** Posts `total` bytes in 64 KiB chunks over a raw connection; resolves with the status, or rejects on a socket error. */
function streamBody(url: string, total: number, announce: boolean): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/x-protobuf' };
    if (announce) headers['content-length'] = total;
    let status = 0;
    const request = httpRequest(`${url}/v1/metrics`, { method: 'POST', headers }, (response) => {
      status = response.statusCode ?? 0;
      response.resume();
    });
    request.on('close', () => setTimeout(() => resolve(status), 50));
    // An error while the body is still being written (EPIPE, ECONNRESET) fails the attempt even if a status came.
    request.on('error', reject);
    const chunk = Buffer.alloc(64 * 1024, 1);
    let sent = 0;
    const write = (): void => {
      while (sent < total) {
        sent += chunk.length;
        if (!request.write(chunk)) return void request.once('drain', write);
      }
      request.end();
    };
    write();
  });
}

describe('ingest limits', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let collector: TestCollector;

  beforeAll(async () => {
    temp = await tempDir();
    collector = await startTestCollector(temp.dir, { limits: { maxBodyBytes: 1024 * 1024 } });
  });
  afterAll(async () => {
    await collector.close();
    await temp.cleanup();
  });

  it('every response carries X-Content-Type-Options: nosniff', async () => {
    const responses = [
      await fetch(`${collector.url}/healthz`),
      await fetch(`${collector.url}/readyz`),
      await fetch(`${collector.url}/api/v1/matrix`),
      await fetch(`${collector.url}/api/v1/matrix?bogus=1`),
      await fetch(`${collector.url}/metrics`),
      await fetch(`${collector.url}/`),
      await fetch(`${collector.url}/no-such-route`),
      await postMetrics(collector.url, valid('nosniff')),
      await postMetrics(collector.url, undefined, { body: 'not protobuf' }),
      await postMetrics(collector.url, undefined, { format: 'json', body: '{' }),
    ];
    for (const response of responses) expect(response.headers.get('x-content-type-options'), response.url).toBe('nosniff');
  });

  it('refuses OTLP/JSON integers beyond their 64-bit range, naming the field, instead of wrapping them', async () => {
    const t = now();
    const overflowingCount = metricsRequest({
      resource: { instance: 'wrap' },
      requests: [{ ...requestPoint({ client: 'a', count: 1, startNs: t - MINUTE_NS, timeNs: t }), asInt: String(2n ** 64n + 5n) }],
    });
    const overflowingTime = metricsRequest({
      resource: { instance: 'wrap' },
      requests: [requestPoint({ client: 'a', count: 1, startNs: t - MINUTE_NS, timeNs: t + 2n ** 64n })],
    });
    const belowSigned = metricsRequest({
      resource: { instance: 'wrap' },
      requests: [{ ...requestPoint({ client: 'a', count: 1, startNs: t - MINUTE_NS, timeNs: t }), asInt: String(-(2n ** 63n) - 1n) }],
    });
    const negativeTime = metricsRequest({
      resource: { instance: 'wrap' },
      requests: [{ ...requestPoint({ client: 'a', count: 1, startNs: t - MINUTE_NS, timeNs: t }), startTimeUnixNano: '-1' }],
    });
    for (const [request, field] of [
      [overflowingCount, 'asInt'],
      [overflowingTime, 'timeUnixNano'],
      [belowSigned, 'asInt'],
      [negativeTime, 'startTimeUnixNano'],
    ] as const) {
      const response = await postMetrics(collector.url, request, { format: 'json' });
      expect(response.status).toBe(400);
      const { message } = (await response.json()) as { message: string };
      expect(message).toContain(`.${field}`);
      expect(message).toMatch(/outside the range of an? (un)?signed 64-bit integer/);
    }
    expect((await matrix(collector.url, '&instance=wrap')).rows).toEqual([]);
    // The largest in-range values are still read as themselves (and refused or accepted on their merits).
    const maxTime = metricsRequest({
      resource: { instance: 'wrap' },
      requests: [requestPoint({ client: 'a', count: 1, startNs: t - MINUTE_NS, timeNs: 2n ** 64n - 1n })],
    });
    const response = await postMetrics(collector.url, maxTime, { format: 'json' });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toMatch(/ahead of the collector|future/);
  });

  it('answers an oversized body 413 after reading it, so the sender gets the answer, not EPIPE', async () => {
    for (const announce of [true, false]) {
      for (let attempt = 0; attempt < 3; attempt++) {
        await expect(streamBody(collector.url, 12 * 1024 * 1024, announce), `content-length announced: ${announce}`).resolves.toBe(413);
      }
    }
    // As OTLP exporters send: the whole body in one write (fetch / undici).
    for (let attempt = 0; attempt < 5; attempt++) {
      const response = await fetch(`${collector.url}/v1/metrics`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-protobuf' },
        body: Buffer.alloc(24 * 1024 * 1024, 1),
      });
      expect(response.status).toBe(413);
    }
    expect((await fetch(`${collector.url}/healthz`)).status).toBe(200);
  });

  it('bounds decompression across concurrent exports: 32 gzip bombs are 413s or 503s and the budget is given back', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024));
    const gzipped = await Promise.all(
      Array.from({ length: 32 }, () =>
        fetch(`${collector.url}/v1/metrics`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' }, body: bomb }),
      ),
    );
    for (const response of gzipped) {
      expect([413, 503]).toContain(response.status);
      if (response.status === 503) expect(response.headers.get('retry-after')).toBe('1');
    }
    // Once they are answered, a normal gzipped export goes through: nothing of the budget was kept.
    expect((await postMetrics(collector.url, valid('after-bombs'), { gzip: true })).status).toBe(200);
  });

  it('a shared budget lets one maximal body through and turns the excess away', () => {
    const budget = new DecompressionBudget(100);
    expect(budget.tryTake(60)).toBe(true);
    expect(budget.tryTake(50)).toBe(false);
    budget.give(60);
    expect(budget.tryTake(100)).toBe(true);
    expect(budget.inUse).toBe(100);
  });
});

describe('decompression memory of a collector process under 32 concurrent gzip bombs', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;
  let child: ChildCollector;

  beforeAll(async () => {
    temp = await tempDir();
    child = await spawnCollector(join(temp.dir, 'extscope.db'));
  });
  afterAll(async () => {
    child.child.kill('SIGKILL');
    await child.exited;
    await temp.cleanup();
  });

  function rssMb(pid: number): { rss: number; peak: number } {
    // /proc/<pid>/status: VmRSS now, VmHWM the peak.
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string): number => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024;
    return { rss: field('VmRSS'), peak: field('VmHWM') };
  }

  it('keeps the peak RSS bounded (was 1.37 GB), answering each bomb 413 or 503', async () => {
    // 32 KB bodies inflating to 32 MiB (the per-export limit) and beyond.
    const bomb = gzipSync(Buffer.alloc(40 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(64 * 1024);
    const pid = child.child.pid as number;
    const before = rssMb(pid);
    const statuses: number[] = [];
    for (let round = 0; round < 3; round++) {
      const responses = await Promise.all(
        Array.from({ length: 32 }, () =>
          fetch(`${child.url}/v1/metrics`, { method: 'POST', headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' }, body: bomb }),
        ),
      );
      statuses.push(...responses.map((response) => response.status));
    }
    const after = rssMb(pid);
    console.log(
      `[faults] 3 rounds × 32 concurrent ${(bomb.length / 1024).toFixed(0)} KB gzip bombs: RSS ${before.rss.toFixed(0)} → ${after.rss.toFixed(0)} MB, peak ${after.peak.toFixed(0)} MB; ${statuses.filter((s) => s === 413).length} × 413, ${statuses.filter((s) => s === 503).length} × 503`,
    );
    for (const status of statuses) expect([413, 503]).toContain(status);
    // The budget (128 MiB) plus the process itself and allocator slack; unbounded it was 1.37 GB.
    expect(after.peak).toBeLessThan(before.peak + 400);
    expect((await fetch(`${child.url}/healthz`)).status).toBe(200);
  });
});

describe('tokens and failed authentication (findings 4 and 5)', () => {
  let temp: Awaited<ReturnType<typeof tempDir>>;

  beforeAll(async () => {
    temp = await tempDir();
  });
  afterAll(async () => {
    await temp.cleanup();
  });

  it('refuses a short or one-character token beyond loopback, saying why', async () => {
    const dbPath = join(temp.dir, 'never.db');
    for (const [ingestToken, readToken, pattern] of [
      ['x', READ, /EXTSCOPE_INGEST_TOKEN is 1 characters long \(at least 16 required\)/],
      [INGEST, 'short-token', /EXTSCOPE_READ_TOKEN is 11 characters long/],
      ['a'.repeat(40), READ, /EXTSCOPE_INGEST_TOKEN repeats a single character/],
    ] as const) {
      const attempt = startCollector({ host: '0.0.0.0', port: 0, dbPath, ingestToken, readToken });
      await expect(attempt).rejects.toThrow(ConfigError);
      await expect(attempt).rejects.toThrow(pattern);
      await expect(attempt).rejects.toThrow(/soon guessed/);
    }
    // On loopback a token is the operator's own choice.
    const local = await startTestCollector(temp.dir, { dbPath: join(temp.dir, 'local.db'), ingestToken: 'x', readToken: 'y' });
    await local.close();
  });

  it('answers 429 + Retry-After after repeated failures from one address, never limiting valid tokens or the probes', async () => {
    const collector = await startTestCollector(temp.dir, {
      dbPath: join(temp.dir, 'auth.db'),
      ingestToken: INGEST,
      readToken: READ,
      limits: { maxAuthFailuresPerMinute: 5 },
    });
    try {
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 8; attempt++) statuses.push((await postMetrics(collector.url, valid('guess'), { token: `wrong-${attempt}` })).status);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
      const limited = await postMetrics(collector.url, valid('guess'), { token: 'wrong-again' });
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(Number(limited.headers.get('retry-after'))).toBeLessThanOrEqual(60);
      const readLimited = await fetch(`${collector.url}/api/v1/matrix`, { headers: { authorization: 'Bearer nope' } });
      expect(readLimited.status).toBe(429);
      expect(readLimited.headers.get('retry-after')).not.toBeNull();
      // The same address with the right tokens, and the probes, are unaffected.
      expect((await postMetrics(collector.url, valid('ok', 3), { token: INGEST })).status).toBe(200);
      expect((await matrix(collector.url, '', READ)).rows[0]?.requests).toBe(3);
      expect((await fetch(`${collector.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${collector.url}/readyz`)).status).toBe(200);
    } finally {
      await collector.close();
    }
  });

  it('remembers a bounded number of addresses, and forgets a window once it has passed', () => {
    let clock = 0;
    const limit = new AuthFailureLimit({ maxFailures: 2, windowMs: 60_000, maxAddresses: 1000, clock: () => clock });
    for (let address = 0; address < 50_000; address++) limit.failed(`10.0.${address >> 8}.${address & 255}`);
    expect(limit.trackedAddresses).toBe(1000);
    expect(limit.failed('a')).toBeUndefined();
    expect(limit.failed('a')).toBeUndefined();
    expect(limit.failed('a')).toBe(60);
    clock += 30_000;
    expect(limit.failed('a')).toBe(30);
    clock += 30_000;
    expect(limit.failed('a')).toBeUndefined();
  });
});

describe('Retry-After agrees with the agent’s 2 s export timeout', () => {
  it('a store error is a 503 with Retry-After of at most 1 s, within which the OTel exporter retries', async () => {
    const app = Fastify();
    const decoder = new DecodePool(1);
    const failing = {
      consumeMetrics: async () => {
        throw new StoreUnavailableError('disk full');
      },
      consumeTraces: async () => {
        throw new StoreUnavailableError('disk full');
      },
    };
    await app.register(otlpReceiver, {
      prefix: '/v1',
      metrics: failing,
      traces: failing,
      admission: new Admission(4),
      limits: { maxBodyBytes: 1024 * 1024, maxDecompressedBytes: 1024 * 1024 },
      ingestToken: undefined,
      telemetry: { exportFinished: () => undefined, metricsConsumed: () => undefined, tracesConsumed: () => undefined },
      decoder,
      decompression: new DecompressionBudget(1024 * 1024),
      receiving: new ReceiveBudget(1024 * 1024, RECEIVE_STALL_MS),
      authFailures: undefined,
    });
    try {
      const response = await app.inject({
        method: 'POST',
        url: '/v1/metrics',
        headers: { 'content-type': 'application/x-protobuf' },
        payload: encodeMetrics(valid('store-error')),
      });
      expect(response.statusCode).toBe(503);
      expect(Number(response.headers['retry-after'])).toBe(MAX_RETRY_AFTER_SECONDS);
      // The exporter gives up when Retry-After ends past its deadline; the agent's deadline is 2 s.
      expect(MAX_RETRY_AFTER_SECONDS * 1000).toBeLessThan(2000);
    } finally {
      await app.close();
      await decoder.close();
    }
  });
});
